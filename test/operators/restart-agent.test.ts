/**
 * RestartAgent over both doors and the CLI, against a real server on
 * loopback with real WASM: a failed agent comes back with a fresh instance,
 * a running one restarts keeping the mail sent meanwhile, and bad input
 * answers in the Error shape with the server still up.
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../../src/cli/cli.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { CRASHABLE_COUNTER, compile } from '../agents/agent-wat.js';
import { assertError, failure, SUITE_TIMEOUT } from '../api/grpc/grpc-harness.js';
import { startCliServer, type CliServer } from '../cli/cli-server.js';
import { memoryIo } from '../cli/memory-io.js';

const WAIT_MS = 20_000;
const COUNTER = await compile(CRASHABLE_COUNTER);

let s: CliServer;
before(async () => {
  // No restarts allowed: the first crash fails the agent.
  s = await startCliServer(['--runtime.restart_max_restarts=0']);
});
after(() => s.stop());

async function stateIs(id: string, state: string): Promise<void> {
  const limit = Date.now() + WAIT_MS;
  for (;;) {
    if ((await s.client.get(id)).state === state) return;
    assert.ok(Date.now() < limit, `agent ${id} never reached ${state}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function post(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const answer = await fetch(`http://${s.http}${path}`, { method: 'POST' });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

/** Sends `content` and reads the reply from the agent's history. */
async function ask(id: string, content: string): Promise<string> {
  const { message_id } = await s.client.send({ receiver: id, message_type: 'request', content });
  const limit = Date.now() + WAIT_MS;
  for (;;) {
    const answer = await fetch(`http://${s.http}/api/v1/agents/${id}/messages`);
    const { messages } = (await answer.json()) as { messages: Array<{ in_reply_to: string; content: string }> };
    const reply = messages.find((m) => m.in_reply_to === message_id);
    if (reply !== undefined) return reply.content;
    assert.ok(Date.now() < limit, `no reply to ${content}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('RestartAgent', SUITE_TIMEOUT, () => {
  it('REST: a failed agent runs again, from a fresh instance, and takes messages', async () => {
    const { agent_id: id } = await s.client.deploy({ name: 'restart-rest', wasm_module: COUNTER });
    assert.equal(await ask(id, 'one'), '1');
    await s.client.send({ receiver: id, message_type: 'request', content: 'boom!' });
    await stateIs(id, 'failed');
    assertError(await failure(s.client.send({ receiver: id, message_type: 'request', content: 'x' })), 'UNAVAILABLE', 14, { reason: 'agent_failed' });

    const restarted = await post(`/api/v1/agents/${id}/restart`);
    assert.equal(restarted.status, 200, JSON.stringify(restarted.body));
    assert.equal(restarted.body.agent_id, id);
    assert.equal(restarted.body.state, 'running');
    assert.equal(await ask(id, 'two'), '1', 'a fresh instance counts from 1');
    await s.client.undeploy(id);
  });

  it('svc_agents{state} and svc_agent_restarts_total on the metrics listener follow a crash and a restart', async () => {
    const scrape = async (): Promise<string> => (await fetch(`http://${s.metrics}/metrics`)).text();
    const value = (text: string, series: string): number => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
    const before = value(await scrape(), 'svc_agent_restarts_total');
    const { agent_id: id } = await s.client.deploy({ name: 'restart-metrics', wasm_module: COUNTER });
    await s.client.send({ receiver: id, message_type: 'request', content: 'boom!' });
    await stateIs(id, 'failed');
    const failed = await scrape();
    assert.ok(value(failed, 'svc_agents{state="failed"}') >= 1, 'the failed agent is counted');
    await s.client.restart(id);
    const after = await scrape();
    assert.equal(value(after, 'svc_agent_restarts_total'), before + 1, 'the operator restart counts; no crash restart with restart_max_restarts 0');
    assert.equal(value(after, 'svc_agents{state="failed"}'), value(failed, 'svc_agents{state="failed"}') - 1);
    await s.client.undeploy(id);
  });

  it('gRPC: a running agent restarts; a message sent during the restart is handled after it', async () => {
    const { agent_id: id } = await s.client.deploy({ name: 'restart-grpc', wasm_module: COUNTER });
    assert.equal(await ask(id, 'one'), '1');
    const restart = s.client.restart(id);
    const during = ask(id, 'during');
    const agent = await restart;
    assert.ok(['running', 'executing'].includes(agent.state), agent.state);
    assert.equal(await during, '1', 'handled by the new instance');
    await s.client.undeploy(id);
  });

  it('svc agents restart ID: prints the agent running again', async () => {
    const { agent_id: id } = await s.client.deploy({ name: 'restart-cli', wasm_module: COUNTER });
    await s.client.send({ receiver: id, message_type: 'request', content: 'boom!' });
    await stateIs(id, 'failed');
    const io = memoryIo({ cwd: tmpdir() });
    const code = await runCli(['agents', 'restart', id, '-o', 'json', ...s.server], io);
    assert.equal(code, EXIT.ok, io.stderr);
    assert.equal((JSON.parse(io.stdout) as { state: string }).state, 'running');
    await s.client.undeploy(id);
  });

  it('bad input: an unknown agent is NOT_FOUND over both doors and the CLI, and the server stays up', async () => {
    const unknown = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
    const rest = await post(`/api/v1/agents/${unknown}/restart`);
    assert.equal(rest.status, 404);
    assert.equal(rest.body.code, 'NOT_FOUND');
    assert.match(String(rest.body.trace_id), /^[0-9a-f]{32}$/);
    assert.equal(typeof rest.body.message, 'string');
    assertError(await failure(s.client.restart(unknown)), 'NOT_FOUND', 5, { agent_id: unknown });
    assertError(await failure(s.client.restart('')), 'INVALID_ARGUMENT', 3, { field: 'agent_id' });
    const wrongMethod = await fetch(`http://${s.http}/api/v1/agents/${unknown}/restart`);
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'POST');
    const io = memoryIo({ cwd: tmpdir() });
    assert.equal(await runCli(['agents', 'restart', unknown, ...s.server], io), EXIT.not_found);
    assert.match(io.stderr, /NOT_FOUND/);
    assert.equal((await s.client.health()).status, 'healthy');
  });
});
