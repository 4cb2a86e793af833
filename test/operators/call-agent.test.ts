/**
 * CallAgent (request/reply) over both doors and `svc call`, against a real
 * server on loopback with real WASM: the reply comes back correlated, a
 * crash answers with the platform's failure, silence ends in
 * DEADLINE_EXCEEDED, and bad input answers in the Error shape with the
 * server still up.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { runCli } from '../../src/cli/cli.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { CRASHABLE_COUNTER, compile, importing } from '../agents/agent-wat.js';
import { assertError, failure, SUITE_TIMEOUT } from '../api/grpc/grpc-harness.js';
import { startCliServer, type CliServer } from '../cli/cli-server.js';
import { memoryIo } from '../cli/memory-io.js';

const ECHO = readFileSync((await ensureExamplesBuilt()).get('echo') ?? '');
const SILENT = await compile(importing());
const COUNTER = await compile(CRASHABLE_COUNTER);

let s: CliServer;
let echo: string;
let silent: string;
let counter: string;
before(async () => {
  s = await startCliServer();
  echo = (await s.client.deploy({ name: 'call-echo', wasm_module: ECHO })).agent_id;
  silent = (await s.client.deploy({ name: 'call-silent', wasm_module: SILENT })).agent_id;
  counter = (await s.client.deploy({ name: 'call-counter', wasm_module: COUNTER })).agent_id;
});
after(() => s.stop());

async function svc(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo({ cwd: tmpdir() });
  const code = await runCli([...args, ...s.server], io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

async function rest(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const answer = await fetch(`http://${s.http}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

describe('CallAgent', SUITE_TIMEOUT, () => {
  it('gRPC: answers the reply, in reply to the request, in its conversation', async () => {
    const reply = await s.client.call({ receiver: echo, message_type: 'request', content: 'hello', conversation_id: 'c-1', reply_with: 'r-1' });
    assert.equal(reply.sender, echo);
    assert.equal(reply.receiver, 'client:anonymous');
    assert.equal(reply.message_type, 'inform');
    assert.equal(reply.content, 'hello');
    assert.equal(reply.conversation_id, 'c-1');
    assert.equal(reply.in_reply_to, 'r-1');
  });

  it('REST: POST /api/v1/agents/{id}/call answers the reply; concurrent calls each get their own', async () => {
    const answers = await Promise.all(['a', 'b', 'c'].map((content) => rest(`/api/v1/agents/${echo}/call`, { message_type: 'request', content })));
    assert.deepEqual(answers.map((a) => [a.status, a.body.content]), [[200, 'a'], [200, 'b'], [200, 'c']]);
    assert.equal(answers[0]?.body.sender, echo);
  });

  it('a crash on the message answers with the platform failure', async () => {
    const reply = await s.client.call({ receiver: counter, message_type: 'request', content: 'boom!' });
    assert.equal(reply.sender, 'platform');
    assert.equal(reply.message_type, 'failure');
  });

  it('no reply within timeout_ms: DEADLINE_EXCEEDED over both doors, naming the message', async () => {
    const error = await failure(s.client.call({ receiver: silent, message_type: 'request' }, 150));
    assertError(error, 'DEADLINE_EXCEEDED', 4, { agent_id: silent, timeout_ms: '150' });
    assert.match(error.body.metadata.message_id ?? '', /^[0-9A-Z]{26}$/);
    const answer = await rest(`/api/v1/agents/${silent}/call?timeout_ms=100`, { message_type: 'request' });
    assert.equal(answer.status, 504);
    assert.equal(answer.body.code, 'DEADLINE_EXCEEDED');
  });

  it('svc call: prints the reply; -o json is the Message; a timeout exits 6', async () => {
    const run = await svc('call', echo, '--type', 'request', '--content', 'from the cli', '-o', 'json');
    assert.equal(run.code, EXIT.ok, run.stderr);
    const reply = JSON.parse(run.stdout) as { content: string; sender: string };
    assert.deepEqual([reply.sender, reply.content], [echo, 'from the cli']);
    const table = await svc('call', echo, '-t', 'request', '-c', 'x');
    assert.match(table.stdout, new RegExp(` ${echo} -> client:anonymous  inform  "x"\\n$`));
    const late = await svc('call', silent, '-t', 'request', '--timeout', '100ms');
    assert.equal(late.code, EXIT.unavailable);
    assert.match(late.stderr, /DEADLINE_EXCEEDED/);
    const crashed = await svc('call', counter, '-t', 'request', '-c', 'boom!');
    assert.equal(crashed.code, EXIT.failure);
    const bad = await svc('call', echo, '-t', 'request', '--timeout', 'soon');
    assert.equal(bad.code, EXIT.usage);
  });

  it('bad input: an unknown agent, a bad performative, a timeout out of range; the server stays up', async () => {
    assertError(await failure(s.client.call({ receiver: '01ARZ3NDEKTSV4RRFFQ69G5FAV', message_type: 'request' })), 'NOT_FOUND', 5);
    assertError(await failure(s.client.call({ receiver: echo, message_type: 'shout' })), 'INVALID_ARGUMENT', 3);
    assertError(await failure(s.client.call({ receiver: echo, message_type: 'request' }, 600_001)), 'INVALID_ARGUMENT', 3, { field: 'timeout_ms' });
    const answer = await rest(`/api/v1/agents/${echo}/call?timeout_ms=soon`, { message_type: 'request' });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.code, 'INVALID_ARGUMENT');
    assert.match(String(answer.body.trace_id), /^[0-9a-f]{32}$/);
    assert.equal((await s.client.call({ receiver: echo, message_type: 'request', content: 'still here' })).content, 'still here');
  });
});
