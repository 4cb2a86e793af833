/**
 * FollowAgentLogs over WebSocket (`GET /api/v1/agents/{id}/logs/follow`),
 * with a real `ws` client against a real server on loopback: a line the
 * agent writes arrives as one AgentLogLine frame; a plain GET answers the
 * kept lines; an unknown agent is a 404 before any upgrade.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { SUITE_TIMEOUT } from '../api/grpc/grpc-harness.js';
import { startCliServer, type CliServer } from '../cli/cli-server.js';

const PONG = readFileSync((await ensureExamplesBuilt()).get('pong') ?? '');

describe('FollowAgentLogs over WebSocket', SUITE_TIMEOUT, () => {
  let s: CliServer;
  let id: string;
  before(async () => {
    s = await startCliServer();
    id = (await s.client.deploy({ name: 'ws-logging-pong', wasm_module: PONG })).agent_id;
  });
  after(() => s.stop());

  it('streams each line the agent writes as one AgentLogLine frame; a plain GET answers the kept lines', async () => {
    const ws = new WebSocket(`ws://${s.http}/api/v1/agents/ws-logging-pong/logs/follow`);
    try {
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      const frame = new Promise<string>((resolve) => ws.once('message', (data: Buffer) => resolve(data.toString('utf8'))));
      await s.client.send({ receiver: id, message_type: 'inform', content: 'hello' });
      const line = JSON.parse(await frame) as { agent_id: string; line: string; time: string };
      assert.equal(line.agent_id, id);
      assert.equal(line.line, 'pong: ignored inform from client:anonymous');
      assert.match(line.time, /^\d{4}-\d\d-\d\dT/);
    } finally {
      const closed = new Promise((resolve) => ws.once('close', resolve));
      ws.close();
      await closed;
    }
    const plain = await fetch(`http://${s.http}/api/v1/agents/${id}/logs/follow`);
    assert.equal(plain.status, 200);
    const { lines } = (await plain.json()) as { lines: Array<{ line: string }> };
    assert.ok(lines.some((l) => l.line === 'pong: ignored inform from client:anonymous'), JSON.stringify(lines));
  });

  it('an unknown agent is a 404 with an Error body before any upgrade; the server stays up', async () => {
    const ws = new WebSocket(`ws://${s.http}/api/v1/agents/nobody-here/logs/follow`);
    ws.on('error', () => undefined);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.once('open', () => reject(new Error('the upgrade was accepted')));
    });
    assert.equal(answer.status, 404);
    const error = JSON.parse(answer.body) as { code: string; trace_id: string };
    assert.equal(error.code, 'NOT_FOUND');
    assert.match(error.trace_id, /^[0-9a-f]{32}$/);
    assert.equal((await s.client.health()).status, 'healthy');
  });
});
