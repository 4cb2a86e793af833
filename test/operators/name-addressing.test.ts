/**
 * An agent's name stands for its id wherever an id is accepted: API paths
 * (both doors), message receivers (a client's and an agent's), stream
 * filters and the CLI. Real server on loopback, real WASM.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { runCli } from '../../src/cli/cli.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { assertError, failure, SUITE_TIMEOUT } from '../api/grpc/grpc-harness.js';
import { startCliServer, type CliServer } from '../cli/cli-server.js';
import { memoryIo } from '../cli/memory-io.js';

const built = await ensureExamplesBuilt();
const ECHO = readFileSync(built.get('echo') ?? '');

let s: CliServer;
let id: string;
before(async () => {
  s = await startCliServer();
  id = (await s.client.deploy({ name: 'named-echo', wasm_module: ECHO })).agent_id;
});
after(() => s.stop());

const base = () => `http://${s.http}/api/v1`;

describe('name addressing', SUITE_TIMEOUT, () => {
  it('GetAgent by name over both doors answers the agent with its id', async () => {
    assert.equal((await s.client.get('named-echo')).agent_id, id);
    const answer = await fetch(`${base()}/agents/named-echo`);
    assert.equal(answer.status, 200);
    assert.equal(((await answer.json()) as { agent_id: string }).agent_id, id);
  });

  it('a message to the name reaches the agent; it is published, kept and answered under the id', async () => {
    const reply = await s.client.call({ receiver: 'named-echo', message_type: 'request', content: 'by name' });
    assert.equal(reply.sender, id);
    const sent = await fetch(`${base()}/agents/named-echo/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_type: 'inform', content: 'path' }) });
    assert.equal(sent.status, 202);
    const { message_id } = (await sent.json()) as { message_id: string };
    const recent = await fetch(`${base()}/agents/named-echo/messages`);
    const { messages } = (await recent.json()) as { messages: Array<{ message_id: string; receiver: string }> };
    const kept = messages.find((m) => m.message_id === message_id);
    assert.equal(kept?.receiver, id, 'history is by id, and the name reads it');
  });

  it('a stream filtered by the name carries the agent messages', async () => {
    const ws = new WebSocket(`ws://${s.http}/api/v1/agents/named-echo/messages`);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const frame = new Promise<{ receiver: string; content: string }>((resolve) => ws.once('message', (data: Buffer) => resolve(JSON.parse(data.toString()) as { receiver: string; content: string })));
    await s.client.send({ receiver: 'named-echo', message_type: 'inform', content: 'streamed' });
    const first = await frame;
    ws.close();
    assert.deepEqual([first.receiver, first.content], [id, 'streamed']);
  });

  it('RestartAgent and the CLI take the name', async () => {
    assert.equal((await s.client.restart('named-echo')).agent_id, id);
    const io = memoryIo({ cwd: tmpdir() });
    const code = await runCli(['agents', 'get', 'named-echo', '-o', 'json', ...s.server], io);
    assert.equal(code, EXIT.ok, io.stderr);
    assert.equal((JSON.parse(io.stdout) as { agent_id: string }).agent_id, id);
  });

  it('bad input: an unknown name is NOT_FOUND; a name shaped like an id is refused at deploy; the server stays up', async () => {
    assertError(await failure(s.client.get('no-such-name')), 'NOT_FOUND', 5, { agent_id: 'no-such-name' });
    assertError(await failure(s.client.send({ receiver: 'no-such-name', message_type: 'inform' })), 'NOT_FOUND', 5);
    const answer = await fetch(`${base()}/agents/no-such-name`);
    assert.equal(answer.status, 404);
    assert.equal(((await answer.json()) as { code: string }).code, 'NOT_FOUND');
    assertError(await failure(s.client.deploy({ name: '01J9Z3K4TQ8W5V6X7Y8Z9A0B1C', wasm_module: ECHO })), 'INVALID_ARGUMENT', 3, { field: 'name', reason: 'reserved' });
    assert.equal((await s.client.get(id)).name, 'named-echo');
  });
});
