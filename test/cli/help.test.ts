/**
 * `--help` and `-h` of every command and group, in-process through the
 * dispatcher: exit 0, the text on stdout, nothing on stderr, and the text
 * holds the summary, the usage line, every argument and flag with its
 * description, and every example. Issue 44: `svc agents deploy --help`
 * exited 2 with parseArgs's "Unknown option" message and its unbalanced quote.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commandTree, runCli } from '../../src/cli/cli.js';
import { flagsOf } from '../../src/cli/command.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { commandHelp, usageLine } from '../../src/cli/help.js';
import { memoryIo } from './memory-io.js';

const tree = commandTree();

async function svc(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await runCli(args, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

describe('every command answers --help and -h', () => {
  for (const command of tree.commands) {
    const name = `svc ${command.path.join(' ')}`;
    it(`${name} --help: exit 0, the whole declaration on stdout`, async () => {
      const run = await svc(...command.path, '--help');
      assert.equal(run.code, EXIT.ok, run.stderr);
      assert.equal(run.stderr, '');
      const text = run.stdout;
      assert.ok(text.startsWith(`${command.summary}\n`), 'starts with the summary');
      assert.ok(text.includes(`Usage:\n  ${usageLine(command)}\n`), 'has the usage line');
      for (const arg of command.args) assert.match(text, new RegExp(`^  ${escape(arg.name)} +${escape(arg.description)}$`, 'm'), `argument ${arg.name}`);
      for (const [flag, spec] of Object.entries(flagsOf(command))) {
        const label = `${spec.short === undefined ? '    ' : `-${spec.short}, `}--${flag}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;
        assert.match(text, new RegExp(`^  ${escape(label)} +${escape(spec.description)}`, 'm'), `flag --${flag} with its description`);
      }
      assert.ok(command.examples.length > 0);
      for (const example of command.examples) assert.ok(text.includes(`  # ${example.description}\n  ${example.command}\n`), `example: ${example.command}`);
      assert.equal(text, commandHelp(command));
    });

    it(`${name} -h: the same text`, async () => {
      const [long, short] = await Promise.all([svc(...command.path, '--help'), svc(...command.path, '-h')]);
      assert.equal(short.code, EXIT.ok);
      assert.equal(short.stdout, long.stdout);
    });

    it(`${name}: every flag and argument is described, every example starts with svc or runs it`, () => {
      assert.notEqual(command.summary.trim(), '');
      for (const [flag, spec] of Object.entries(command.flags)) {
        assert.notEqual(spec.description.trim(), '', `--${flag}`);
        if (spec.short !== undefined) assert.match(spec.short, /^[A-Za-z]$/, `-${spec.short}`);
      }
      for (const arg of command.args) assert.notEqual(arg.description.trim(), '', arg.name);
      for (const example of command.examples) assert.match(example.command, /\bsvc /, example.command);
    });
  }

  it('no two flags of a command share a short name', () => {
    for (const command of tree.commands) {
      const shorts = Object.values(flagsOf(command)).flatMap((spec) => (spec.short === undefined ? [] : [spec.short]));
      assert.equal(new Set(shorts).size, shorts.length, `svc ${command.path.join(' ')}: ${shorts.join(' ')}`);
    }
  });
});

describe('help of groups and of svc itself', () => {
  for (const group of ['agents', 'messages', 'context', 'new']) {
    it(`svc ${group} --help lists its subcommands with their summaries, exit 0`, async () => {
      for (const flag of ['--help', '-h']) {
        const run = await svc(group, flag);
        assert.equal(run.code, EXIT.ok);
        for (const child of tree.children([group])) assert.match(run.stdout, new RegExp(`^  ${child.path.at(-1)} +${escape(child.summary)}$`, 'm'));
      }
    });

    it(`svc ${group} alone prints the same on stderr, exit 2`, async () => {
      const [alone, help] = await Promise.all([svc(group), svc(group, '--help')]);
      assert.equal(alone.code, EXIT.usage);
      assert.equal(alone.stderr, help.stdout);
    });
  }

  it('svc --help, svc -h and svc help list every top-level command, exit 0', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const run = await svc(...args);
      assert.equal(run.code, EXIT.ok);
      for (const node of tree.children([])) assert.match(run.stdout, new RegExp(`^  ${node.path[0]} +${escape(node.summary)}$`, 'm'));
      assert.match(run.stdout, /^Exit codes: 0 ok, 1 failure, 2 usage/m);
    }
  });

  it('svc help agents deploy is svc agents deploy --help', async () => {
    const [viaHelp, viaFlag] = await Promise.all([svc('help', 'agents', 'deploy'), svc('agents', 'deploy', '--help')]);
    assert.equal(viaHelp.code, EXIT.ok);
    assert.equal(viaHelp.stdout, viaFlag.stdout);
    const unknown = await svc('help', 'agents', 'explode');
    assert.equal(unknown.code, EXIT.usage);
    assert.equal(unknown.stderr, "svc: no command 'svc agents explode'\nRun 'svc --help' for the commands.\n");
  });

  it('svc with no command prints the help on stderr, exit 2', async () => {
    const run = await svc();
    assert.equal(run.code, EXIT.usage);
    assert.match(run.stderr, /^Commands:$/m);
  });
});

describe('issue 44: svc agents deploy --help', () => {
  it('exits 0 with the help, wherever --help stands and whatever else the line holds', async () => {
    for (const args of [['--help'], ['-h'], ['x.wasm', '--help'], ['--bogus', '--help'], ['--name', 'x', '-h']]) {
      const run = await svc('agents', 'deploy', ...args);
      assert.equal(run.code, EXIT.ok, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stdout, /^Deploy a WebAssembly module as a new agent\.\n/);
    }
  });

  it('prints this text', async () => {
    const run = await svc('agents', 'deploy', '--help');
    assert.equal(
      run.stdout.split('\n\nFlags:\n')[1]?.split('\n\n')[0],
      [
        '  -n, --name NAME           The agent\'s name, unique on the server. (required)',
        '  -c, --capability NAME     A capability the agent advertises (a label). (repeatable)',
        '  -m, --memory-limit SIZE   Linear memory the agent may use: bytes, 64KiB, 16MiB (default: the server maximum).',
        '  -h, --help                Show this help and exit.',
      ].join('\n'),
    );
  });

  it('a value that is --help is a value, not a request for help', async () => {
    const run = await svc('messages', 'send', 'agent', '--type', 'inform', '--content', '--help', '--server', '127.0.0.1:1');
    assert.notEqual(run.stdout.startsWith('Send'), true);
    assert.equal(run.code, EXIT.unavailable, run.stderr);
  });

  it('no message quotes unevenly', async () => {
    for (const args of [['agents', 'list', '--colour'], ['agents', 'deploy', '--name'], ['agents', 'list', '-w=1'], ['health', '-x']]) {
      const run = await svc(...args);
      assert.equal(run.code, EXIT.usage);
      const first = run.stderr.split('\n')[0] ?? '';
      assert.equal((first.match(/'/g) ?? []).length % 2, 0, first);
    }
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
