/**
 * The client commands end to end: `svc` runs as a real process against a
 * real server listening on loopback gRPC. Deploys the echo example, follows
 * its messages, sends one, lists, gets, undeploys; then the failures, each
 * with its one-line error and the exit code scripts rely on.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { startGrpcTestServer, SUITE_TIMEOUT, type GrpcTestServer } from '../api/grpc/grpc-harness.js';
import { wat } from '../helpers/wat.js';
import { runCli as runCliInProcess } from '../../src/cli/cli.js';
import { memoryIo } from './memory-io.js';
import { runCli, startCli, type Run } from './run-cli.js';

const ECHO = (await ensureExamplesBuilt()).get('echo');
const dir = mkdtempSync(join(tmpdir(), 'svc-cli-remote-'));

describe('svc client commands against a running server', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  const svc = (...args: string[]): Promise<Run> => runCli([...args, '--server', s.address], { cwd: dir });

  before(async () => {
    s = await startGrpcTestServer();
  });
  after(async () => {
    await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('health: healthy, exit 0, in both output forms', async () => {
    const table = await svc('health');
    assert.equal(table.code, EXIT.ok, table.stderr);
    assert.match(table.stdout, /^healthy {2}version \S+ {2}agents 0\/\d+ {2}trace [0-9a-f]{32}\n$/);
    const json = await svc('health', '--output', 'json');
    assert.equal((JSON.parse(json.stdout) as { status: string }).status, 'healthy');
  });

  it('finds the server through SVC_GRPC_ADDR when --server is not given', async () => {
    const run = await runCli(['health'], { cwd: dir, env: { SVC_GRPC_ADDR: s.address } });
    assert.equal(run.code, EXIT.ok, run.stderr);
  });

  it('deploy, tail, send, list, get, undeploy', async () => {
    assert.ok(ECHO, 'the echo example is built');
    const deployed = await svc('agents', 'deploy', ECHO, '--name', 'cli-echo', '--capability', 'echo', '--capability', 'test', '--memory-limit', '1MiB');
    assert.equal(deployed.code, EXIT.ok, deployed.stderr);
    const id = deployed.stdout.trim();
    assert.match(id, /^[0-9A-Z]{26}$/);

    const tail = startCli(['messages', 'tail', '--agent', id, '--count', '2', '--output', 'json', '--server', s.address], { cwd: dir });
    await tail.stderrIncludes('following');
    const sent = await svc('messages', 'send', id, '--type', 'request', '--content', 'hello from the cli');
    assert.equal(sent.code, EXIT.ok, sent.stderr);
    const messageId = sent.stdout.trim();
    const tailed = await tail.done;
    assert.equal(tailed.code, EXIT.ok, tailed.stderr);
    const lines = tailed.stdout.trim().split('\n').map((l) => JSON.parse(l) as { message_id: string; sender: string; message_type: string; content: string; in_reply_to: string });
    assert.deepEqual(lines.map((m) => [m.sender, m.message_type, m.content]), [
      ['client:anonymous', 'request', 'hello from the cli'],
      [id, 'inform', 'hello from the cli'],
    ]);
    assert.equal(lines[0]?.message_id, messageId);
    assert.equal(lines[1]?.in_reply_to, messageId);

    const listed = await svc('agents', 'list');
    assert.equal(listed.code, EXIT.ok, listed.stderr);
    assert.match(listed.stdout, /^AGENT_ID\s+NAME\s+STATE/);
    assert.match(listed.stdout, new RegExp(`^${id}\\s+cli-echo\\s+\\w+`, 'm'));
    const listedJson = JSON.parse((await svc('agents', 'list', '--output', 'json')).stdout) as { agents: Array<{ agent_id: string }> };
    assert.ok(listedJson.agents.some((a) => a.agent_id === id));

    const got = await svc('agents', 'get', id, '--output', 'json');
    assert.equal(got.code, EXIT.ok, got.stderr);
    const agent = JSON.parse(got.stdout) as { name: string; capabilities: string[]; resources: { memory_limit: number }; messages_received: number };
    assert.equal(agent.name, 'cli-echo');
    assert.deepEqual(agent.capabilities, ['echo', 'test']);
    assert.equal(agent.resources.memory_limit, 1024 * 1024);
    assert.equal(agent.messages_received, 1);
    assert.match((await svc('agents', 'get', id)).stdout, /^name\s+cli-echo$/m);

    const undeployed = await svc('agents', 'undeploy', id);
    assert.equal(undeployed.code, EXIT.ok, undeployed.stderr);
    assert.equal(undeployed.stdout, `undeployed ${id}\n`);

    const again = await svc('agents', 'undeploy', id);
    assert.equal(again.code, EXIT.not_found);
    assert.match(again.stderr, /^svc: NOT_FOUND: .* \(trace [0-9a-f]{32}\)\n$/);
  });

  it('tail --type and --agent: only the messages of that type (and agent), while others are sent', async () => {
    assert.ok(ECHO, 'the echo example is built');
    const module = readFileSync(ECHO);
    const a = (await s.client.deploy({ name: 'cli-tail-a', wasm_module: module })).agent_id;
    const b = (await s.client.deploy({ name: 'cli-tail-b', wasm_module: module })).agent_id;
    /** Resolves once `id` has sent `n` replies, so they are on the bus before what is sent next. */
    const replied = async (id: string, n: number): Promise<void> => {
      const until = Date.now() + 5_000;
      while ((await s.client.get(id)).messages_sent < n) {
        assert.ok(Date.now() < until, `${id} sent fewer than ${n} replies`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    type Line = { sender: string; receiver: string; message_type: string; content: string };
    const parse = (stdout: string): string[][] =>
      stdout.trim().split('\n').map((l) => JSON.parse(l) as Line).map((m) => [m.sender, m.receiver, m.message_type, m.content]);
    const tail = (...filter: string[]) => startCli(['messages', 'tail', ...filter, '--output', 'json', '--server', s.address], { cwd: dir });
    // --count ends each tail; every message a filter must reject is on the bus before the last matching one, so a leak takes a counted line.
    const informs = tail('--type', 'inform', '--count', '4');
    const informsOfA = tail('--agent', a, '--type', 'inform', '--count', '3');
    try {
      await Promise.all([informs.stderrIncludes('following'), informsOfA.stderrIncludes(`following messages of ${a}`)]);
      await s.client.send({ receiver: a, message_type: 'request', content: 'r1' });
      await s.client.send({ receiver: b, message_type: 'cfp', content: 'c1' });
      await Promise.all([replied(a, 1), replied(b, 1)]);
      const sent = await svc('messages', 'send', a, '--type', 'inform', '--content', 'i1');
      assert.equal(sent.code, EXIT.ok, sent.stderr);

      const [all, ofA] = await Promise.all([informs.done, informsOfA.done]);
      assert.equal(all.code, EXIT.ok, all.stderr);
      assert.equal(ofA.code, EXIT.ok, ofA.stderr);
      const client = 'client:anonymous';
      // The two first replies come from two agents in either order.
      assert.deepEqual(parse(all.stdout).sort(), [
        [a, client, 'inform', 'r1'],
        [b, client, 'inform', 'c1'],
        [client, a, 'inform', 'i1'],
        [a, client, 'inform', 'i1'],
      ].sort());
      assert.deepEqual(parse(ofA.stdout), [
        [a, client, 'inform', 'r1'],
        [client, a, 'inform', 'i1'],
        [a, client, 'inform', 'i1'],
      ]);
    } finally {
      informs.child.kill('SIGKILL');
      informsOfA.child.kill('SIGKILL');
      await Promise.all([s.client.undeploy(a), s.client.undeploy(b)]);
    }
  });

  it('a refused module: exit 4, one line naming the code and the reason', async () => {
    const file = join(dir, 'hostile.wasm');
    writeFileSync(file, await wat('(module (import "wasi_snapshot_preview1" "path_open" (func)) (memory (export "memory") 1 2) (func (export "handle")))'));
    const run = await svc('agents', 'deploy', file, '--name', 'hostile');
    assert.equal(run.code, EXIT.rejected);
    assert.equal(run.stdout, '');
    assert.equal(run.stderr.split('\n').length, 2, 'one line');
    assert.match(run.stderr, /^svc: INVALID_MODULE: .*reason=forbidden_import import=wasi_snapshot_preview1\.path_open/);
  });

  const failures: Array<[string, string[], number, RegExp]> = [
    ['an invalid performative', ['messages', 'send', 'some-agent', '--type', 'shout'], EXIT.rejected, /^svc: INVALID_ARGUMENT: .*field=message_type/],
    ['an unknown agent', ['agents', 'get', 'no-such-agent'], EXIT.not_found, /^svc: NOT_FOUND: /],
    ['a message to an unknown agent', ['messages', 'send', 'no-such-agent', '--type', 'inform'], EXIT.not_found, /^svc: NOT_FOUND: /],
    ['a tail with an invalid filter', ['messages', 'tail', '--type', 'shout'], EXIT.rejected, /^svc: INVALID_ARGUMENT: /],
    ['a missing --name', ['agents', 'deploy', 'x.wasm'], EXIT.usage, /--name is required/],
    ['a missing --type', ['messages', 'send', 'a'], EXIT.usage, /--type is required/],
    ['an unknown option', ['agents', 'list', '--colour'], EXIT.usage, /^svc: unknown option '--colour'\nRun 'svc agents list --help' for usage\.\n$/],
    ['an unknown output form', ['health', '--output', 'xml'], EXIT.usage, /--output must be one of table, wide, json, yaml, got 'xml'/],
    ['an unknown subcommand', ['agents', 'explode'], EXIT.usage, /unknown agents subcommand 'explode'/],
    ['a bad --memory-limit', ['agents', 'deploy', 'x.wasm', '--name', 'n', '--memory-limit', 'lots'], EXIT.usage, /--memory-limit takes a size/],
    ['a bad --count', ['messages', 'tail', '--count', '0'], EXIT.usage, /--count takes a positive integer/],
  ];
  // In-process, through the same dispatcher: a process each would spend most of the suite loading the CLI.
  for (const [name, args, code, stderr] of failures) {
    it(`${name}: exit ${code}`, async () => {
      const io = memoryIo({ cwd: dir });
      assert.equal(await runCliInProcess([...args, '--server', s.address], io), code, io.stderr);
      assert.match(io.stderr, stderr);
    });
  }
});

describe('svc client commands without a server', SUITE_TIMEOUT, () => {
  it('exit 6 (unavailable) with one line naming the address', async () => {
    const run = await runCli(['health', '--server', '127.0.0.1:1'], { cwd: tmpdir() });
    assert.equal(run.code, EXIT.unavailable);
    assert.equal(run.stderr, 'svc: UNAVAILABLE: no connection to the server at 127.0.0.1:1 cause=ECONNREFUSED\n');
  });

  // Before: grpc-js's own "Could not parse target name" and exit 1.
  for (const server of ['', 'nohost', '127.0.0.1:99999']) {
    it(`--server '${server}': a usage error, exit 2`, async () => {
      const run = await runCli(['health', '--server', server], { cwd: tmpdir() });
      assert.equal(run.code, EXIT.usage);
      assert.equal(run.stderr.split('\n')[0], `svc: --server takes HOST:PORT, got '${server}'`);
    });
  }

  // Before: a bare Node error (ENOENT, EISDIR) without a code, exit 1. Refused before any connection is tried.
  const unreadable: Array<[string, string, string]> = [['missing', 'no-such.wasm', 'ENOENT'], ['a directory', '.', 'EISDIR']];
  for (const [what, file, cause] of unreadable) {
    for (const args of [['agents', 'deploy', file, '--name', 'x', '--server', '127.0.0.1:1'], ['check', file]]) {
      it(`${args[0]} of a module file that is ${what}: one INVALID_ARGUMENT line, exit 4`, async () => {
        const run = await runCli(args, { cwd: tmpdir() });
        assert.equal(run.code, EXIT.rejected);
        assert.equal(run.stderr, `svc: INVALID_ARGUMENT: cannot read the module file ${file} field=file reason=unreadable cause=${cause}\n`);
      });
    }
  }
});
