/**
 * An agent's own log lines: kept per agent in a buffer bounded in bytes,
 * read through GetAgentLogs (gRPC and REST), followed through
 * FollowAgentLogs, and printed by `svc logs [-f]`. Real server on loopback,
 * real WASM (the pong example logs what it ignores).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';
import type { ServiceError } from '@grpc/grpc-js';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { createAgentLogs } from '../../src/agents/agent-logs.js';
import type { AgentLogLine } from '../../src/agents/agent-service-types.js';
import { runCli } from '../../src/cli/cli.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { assertError, failure, SUITE_TIMEOUT } from '../api/grpc/grpc-harness.js';
import { startCliServer, type CliServer } from '../cli/cli-server.js';
import { memoryIo } from '../cli/memory-io.js';

const PONG = readFileSync((await ensureExamplesBuilt()).get('pong') ?? '');

describe('the per-agent log buffer', () => {
  it('keeps the latest lines within its bytes, oldest first, per agent; forget drops them', () => {
    const logs = createAgentLogs({ maxBytes: 3 * (64 + 10), now: () => 0 });
    for (let i = 0; i < 5; i++) logs.write('a', `line ${i}....`.slice(0, 10));
    logs.write('b', 'other');
    assert.deepEqual(logs.recent('a').map((l) => l.line), ['line 2....', 'line 3....', 'line 4....']);
    assert.deepEqual(logs.recent('a', 1).map((l) => l.line), ['line 4....']);
    assert.equal(logs.recent('b')[0]?.time, '1970-01-01T00:00:00.000Z');
    logs.forget('a');
    assert.deepEqual(logs.recent('a'), []);
    logs.write('c', 'x'.repeat(1000));
    assert.deepEqual(logs.recent('c'), [], 'a line larger than the buffer is not kept');
  });
});

describe('GetAgentLogs, FollowAgentLogs and svc logs', SUITE_TIMEOUT, () => {
  let s: CliServer;
  let id: string;
  before(async () => {
    s = await startCliServer();
    id = (await s.client.deploy({ name: 'logging-pong', wasm_module: PONG })).agent_id;
  });
  after(() => s.stop());

  it('a line the agent writes is streamed as it comes, then kept for both doors', async () => {
    const stream = s.client.followLogs('logging-pong');
    // Cancelling ends the call with CANCELLED, which is expected here.
    stream.on('error', () => undefined);
    await new Promise((resolve) => stream.once('metadata', resolve));
    const first = new Promise<AgentLogLine>((resolve) => stream.once('data', resolve));
    await s.client.send({ receiver: id, message_type: 'inform', content: 'hello' });
    const line = await first;
    stream.cancel();
    assert.equal(line.agent_id, id);
    assert.equal(line.line, 'pong: ignored inform from client:anonymous');
    assert.match(line.time, /^\d{4}-\d\d-\d\dT/);

    const viaGrpc = await s.client.logs(id);
    assert.deepEqual(viaGrpc.lines.map((l) => l.line), [line.line]);
    const answer = await fetch(`http://${s.http}/api/v1/agents/logging-pong/logs?limit=1`);
    assert.equal(answer.status, 200);
    assert.deepEqual(((await answer.json()) as { lines: AgentLogLine[] }).lines, [line]);
  });

  it('svc logs prints the kept lines; -f then follows until Ctrl-C', async () => {
    const printed = memoryIo({ cwd: tmpdir() });
    assert.equal(await runCli(['logs', 'logging-pong', ...s.server], printed), EXIT.ok, printed.stderr);
    assert.match(printed.stdout, / {2}pong: ignored inform from client:anonymous\n$/);

    const io = memoryIo({ cwd: tmpdir() });
    const following = runCli(['logs', id, '-f', '-n', '1', '-o', 'json', ...s.server], io);
    await io.stdoutMatches((out) => out.split('\n').length === 2);
    // The follow is in place once its notice is out: what is sent after it is streamed.
    const limit = Date.now() + 20_000;
    while (!io.stderr.includes('following')) {
      assert.ok(Date.now() < limit, 'the follow never started');
      await new Promise((resolve) => setImmediate(resolve));
    }
    await s.client.send({ receiver: id, message_type: 'cfp', content: 'x' });
    await io.stdoutMatches((out) => out.includes('ignored cfp'));
    io.interrupt();
    assert.equal(await following, EXIT.ok);
    const lines = io.stdout.trim().split('\n').map((l) => JSON.parse(l) as AgentLogLine);
    assert.deepEqual(lines.map((l) => l.line), ['pong: ignored inform from client:anonymous', 'pong: ignored cfp from client:anonymous']);
  });

  it('bad input: an unknown agent is NOT_FOUND everywhere, a limit out of range INVALID_ARGUMENT; the server stays up', async () => {
    assertError(await failure(s.client.logs('no-such-agent')), 'NOT_FOUND', 5);
    assertError(await failure(s.client.logs(id, 1001)), 'INVALID_ARGUMENT', 3, { field: 'limit' });
    const answer = await fetch(`http://${s.http}/api/v1/agents/no-such-agent/logs`);
    assert.equal(answer.status, 404);
    assert.equal(((await answer.json()) as { code: string }).code, 'NOT_FOUND');
    const stream = s.client.followLogs('no-such-agent');
    const error = await new Promise<ServiceError>((resolve) => stream.once('error', resolve));
    assert.equal(error.code, 5);
    const io = memoryIo({ cwd: tmpdir() });
    assert.equal(await runCli(['logs', 'no-such-agent', ...s.server], io), EXIT.not_found);
    assert.equal(await runCli(['logs', id, '-n', 'many', ...s.server], memoryIo({ cwd: tmpdir() })), EXIT.usage);
    assert.equal((await s.client.health()).status, 'healthy');
  });
});
