/**
 * `svc new agent`: the project it writes meets the agent ABI as written
 * (asconfig.json), and as built: with the SDK installed from its packed
 * tarball, `npm test` in the project builds the agent with the pinned
 * AssemblyScript and its own test passes, `svc check` included.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../../src/cli/cli.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { memoryIo } from './memory-io.js';
import { newAgentProject, npmRun, packSdk, svcBin } from './agent-project.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-new-agent-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function svc(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo({ cwd });
  const code = await runCli(args, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

describe('svc new agent', { timeout: 600_000 }, () => {
  let tarball = '';
  before(async () => {
    tarball = await packSdk(dir);
  });

  it('the SDK packs into a tarball of its sources, its README and package.json', async () => {
    const listing = await packSdk(mkdtempSync(join(dir, 'pack-')));
    assert.match(listing, /svc-agent-sdk-\d+\.\d+\.\d+\.tgz$/);
  });

  it('writes a project whose package and asconfig meet the ABI', async () => {
    const run = await svc(dir, 'new', 'agent', 'greeter');
    assert.equal(run.code, EXIT.ok, run.stderr);
    assert.match(run.stdout, /^created greeter \(agent greeter\)\nnext:\n {2}cd greeter\n {2}npm install\n {2}npm test\n/);
    const project = join(dir, 'greeter');
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { devDependencies: Record<string, string>; dependencies: Record<string, string>; scripts: Record<string, string> };
    assert.deepEqual(manifest.devDependencies, { assemblyscript: '0.28.20' });
    assert.match(manifest.dependencies['svc-agent-sdk'] ?? '', /^file:\/.*\/packages\/svc-agent-sdk$/);
    assert.equal(manifest.scripts.build, 'asc --config asconfig.json');
    const { entries, options } = JSON.parse(readFileSync(join(project, 'asconfig.json'), 'utf8')) as { entries: string[]; options: Record<string, unknown> };
    assert.deepEqual(entries, ['assembly/index.ts']);
    assert.deepEqual(options.disable, ['bulk-memory']);
    assert.ok(typeof options.maximumMemory === 'number' && options.maximumMemory > 0 && options.maximumMemory <= 1024);
    assert.deepEqual(options.use, ['abort=~lib/svc-agent-sdk/abort/svcAbort']);
    assert.equal(options.exportStart, '_initialize');
    assert.match(readFileSync(join(project, 'assembly', 'index.ts'), 'utf8'), /^export \{ handle \} from "svc-agent-sdk";$/m);
  });

  it('npm test in the project builds the agent and passes its own test, svc check and svc run included', async () => {
    const project = await newAgentProject(dir, 'built', tarball);
    const bin = svcBin(dir);
    const test = await npmRun(project, 'test', bin);
    assert.equal(test.code, 0, `${test.stdout}\n${test.stderr}`);
    assert.match(test.stdout, /^# pass 3$/m);
    assert.match(test.stdout, /^# fail 0$/m);
    const check = await svc(project, 'check', 'build/built.wasm', '-o', 'json');
    const info = JSON.parse(check.stdout) as { imports: string[]; exports: string[] };
    assert.deepEqual(info.imports.sort(), ['fd_read', 'fd_write']);
    assert.ok(info.exports.includes('handle'));
  });

  it("the project's test fails, naming the import, when the agent reaches for what the ABI forbids", async () => {
    const project = await newAgentProject(dir, 'cheater', tarball);
    writeFileSync(join(project, 'assembly', 'index.ts'), `${readFileSync(join(project, 'assembly', 'index.ts'), 'utf8')}\nexport function roll(): f64 { return Math.random(); }\n`);
    const test = await npmRun(project, 'test', svcBin(dir));
    assert.notEqual(test.code, 0);
    assert.match(test.stdout, /the ABI does not allow the import env\.seed/);
  });

  const refusals: Array<[string, string[], number, RegExp]> = [
    ['a name npm would refuse', ['new', 'agent', 'Big Name'], EXIT.usage, /^svc: a project name is 1 to 64 lower case letters/],
    ['a name that climbs out', ['new', 'agent', '../x'], EXIT.usage, /^svc: a project name/],
    ['no name', ['new', 'agent'], EXIT.usage, /^svc: expected NAME\n/],
  ];
  for (const [name, args, code, stderr] of refusals) {
    it(`refuses ${name}: exit ${code}, nothing written`, async () => {
      const cwd = mkdtempSync(join(dir, 'refused-'));
      const run = await svc(cwd, ...args);
      assert.equal(run.code, code);
      assert.match(run.stderr, stderr);
    });
  }

  it('refuses a directory that is not empty (exit 4), and writes into an empty one given by --dir', async () => {
    const cwd = mkdtempSync(join(dir, 'dirs-'));
    mkdirSync(join(cwd, 'taken'));
    writeFileSync(join(cwd, 'taken', 'keep.txt'), 'mine');
    const taken = await svc(cwd, 'new', 'agent', 'taken');
    assert.equal(taken.code, EXIT.rejected);
    assert.match(taken.stderr, /^svc: ALREADY_EXISTS: .*taken exists and is not empty/);
    assert.equal(readFileSync(join(cwd, 'taken', 'keep.txt'), 'utf8'), 'mine');
    mkdirSync(join(cwd, 'empty'));
    const placed = await svc(cwd, 'new', 'agent', 'placed', '--dir', 'empty', '--sdk', '^0.1.0');
    assert.equal(placed.code, EXIT.ok, placed.stderr);
    assert.equal((JSON.parse(readFileSync(join(cwd, 'empty', 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies['svc-agent-sdk'], '^0.1.0');
  });
});
