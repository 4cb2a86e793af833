/**
 * `svc completion bash|zsh`. The bash script is loaded into a real bash,
 * which is asked to complete command lines as it would at a Tab (COMP_WORDS,
 * COMP_CWORD, then the completion function); zsh, where installed, checks
 * the zsh script's syntax (completing needs a terminal zsh's completion
 * system runs in).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commandTree, runCli } from '../../src/cli/cli.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { PERFORMATIVES } from '../../src/bus/performatives.js';
import { memoryIo } from './memory-io.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-completion-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function script(shell: string): Promise<string> {
  const io = memoryIo({ cwd: dir });
  const code = await runCli(['completion', shell], io);
  assert.equal(code, EXIT.ok, io.stderr);
  return io.stdout;
}

describe('bash completion', () => {
  let file = '';
  before(async () => {
    file = join(dir, 'svc.bash');
    writeFileSync(file, await script('bash'));
    mkdirSync(join(dir, 'work'));
    for (const name of ['agent.wasm', 'ca.pem', 'notes.txt']) writeFileSync(join(dir, 'work', name), '');
  });

  /** What bash offers for `line` with the cursor at its end (a trailing space: a new word). */
  function complete(line: string): string[] {
    const words = line.split(' ');
    const program = `source ${JSON.stringify(file)}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})
COMP_CWORD=${words.length - 1}
_svc
printf '%s\\n' "\${COMPREPLY[@]}"`;
    return execFileSync('bash', ['--norc', '--noprofile', '-c', program], { cwd: join(dir, 'work'), encoding: 'utf8' }).split('\n').filter((w) => w !== '').sort();
  }

  it('offers the top-level commands, then a group\'s subcommands', () => {
    assert.deepEqual(complete('svc '), [...commandTree().children([]).map((n) => n.path[0] ?? ''), '--help', '-h'].sort());
    assert.deepEqual(complete('svc ag'), ['agents']);
    assert.deepEqual(complete('svc agents '), ['--help', '-h', 'deploy', 'get', 'list', 'restart', 'undeploy', 'update']);
    assert.deepEqual(complete('svc context u'), ['use']);
    assert.deepEqual(complete('svc new '), ['--help', '-h', 'agent']);
  });

  it("offers a command's flags, long and short", () => {
    assert.deepEqual(complete('svc agents list --w'), ['--watch']);
    assert.deepEqual(complete('svc agents list -'), ['--api-key', '--config', '--context', '--help', '--interval', '--output', '--server', '--token', '--watch', '-h', '-o', '-s', '-w']);
  });

  it("offers a flag's values", () => {
    assert.deepEqual(complete('svc agents list -o '), ['json', 'table', 'wide', 'yaml']);
    assert.deepEqual(complete('svc agents get x --output y'), ['yaml']);
    assert.deepEqual(complete('svc messages send a1 --type inf'), PERFORMATIVES.filter((p) => p.startsWith('inf')).sort());
    assert.deepEqual(complete('svc context set x --unset tls_'), ['tls_ca_file', 'tls_cert_file', 'tls_key_file']);
    assert.deepEqual(complete('svc completion '), ['bash', 'zsh']);
  });

  it('offers files where a file goes, and nothing for free text', () => {
    assert.deepEqual(complete('svc agents deploy '), ['agent.wasm', 'ca.pem', 'notes.txt']);
    assert.deepEqual(complete('svc check a'), ['agent.wasm']);
    assert.deepEqual(complete('svc context set x --tls-ca c'), ['ca.pem']);
    assert.deepEqual(complete('svc agents deploy agent.wasm --name '), []);
    assert.deepEqual(complete('svc agents get '), []);
  });

  it('registers itself for svc', () => {
    const out = execFileSync('bash', ['--norc', '--noprofile', '-c', `source ${JSON.stringify(file)}; complete -p svc`], { encoding: 'utf8' });
    assert.equal(out.trim(), 'complete -F _svc svc');
  });
});

describe('zsh completion', () => {
  it('declares every command and its flags', async () => {
    const text = await script('zsh');
    assert.ok(text.startsWith('#compdef svc\n'));
    for (const command of commandTree().commands) {
      assert.ok(text.includes(`    '${command.path.join(' ')}') _arguments -s -S`), command.path.join(' '));
    }
    assert.ok(text.includes("'(-o --output)'{-o,--output}'[Output format (default table; wide adds columns; json and yaml for scripts).]:FORMAT:(table wide json yaml)'"));
    assert.ok(text.includes("'*'{-c,--capability}'[A capability the agent advertises (a label).]:NAME: '"));
    assert.ok(text.includes("'1:FILE.wasm:_files'"));
    assert.ok(text.includes(":HOST\\:PORT: '"), 'a colon in a value name is escaped');
  });

  it('is valid zsh', async (t) => {
    if (spawnSync('zsh', ['--version']).error !== undefined) {
      t.skip('zsh is not installed here: only the bash script is run');
      return;
    }
    const file = join(dir, '_svc');
    writeFileSync(file, await script('zsh'));
    execFileSync('zsh', ['-n', file]);
  });
});

describe('svc completion', () => {
  it('refuses another shell: exit 2', async () => {
    const io = memoryIo({ cwd: dir });
    assert.equal(await runCli(['completion', 'fish'], io), EXIT.usage);
    assert.match(io.stderr, /^svc: SHELL must be one of bash, zsh, got 'fish'\n/);
  });
});
