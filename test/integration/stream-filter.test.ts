/**
 * A stream filtered by an agent that does not exist (issue 41, item 6) ends
 * at once with NOT_FOUND instead of waiting forever: the gRPC
 * SubscribeMessages call, and `svc messages tail --agent` as a real process,
 * which exits with the not-found code and the error.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ServiceError } from '@grpc/grpc-js';
import { status } from '@grpc/grpc-js';
import { errorFromStatus } from '../../src/api/grpc/grpc-errors.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { example } from '../agents/agent-fixtures.js';
import { startGrpcTestServer, SUITE_TIMEOUT, type GrpcTestServer } from '../api/grpc/grpc-harness.js';
import { runSvc } from './svc-process.js';

describe('a stream filter naming an unknown agent', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  let cwd: string;
  before(async () => {
    s = await startGrpcTestServer();
    cwd = mkdtempSync(join(tmpdir(), 'svc-tail-'));
  });
  after(async () => {
    await s.stop();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('SubscribeMessages ends with NOT_FOUND naming the agent', async () => {
    const subscribed = s.subscribers();
    const call = s.client.subscribe({ agent_id: 'nope' });
    const error = await new Promise<ServiceError>((resolve, reject) => {
      call.on('error', resolve);
      call.on('end', () => reject(new Error('the stream ended without an error')));
      call.on('data', () => reject(new Error('the stream carried a message')));
    });
    assert.equal(error.code, status.NOT_FOUND);
    const body = errorFromStatus(error);
    assert.equal(body.code, 'NOT_FOUND');
    assert.equal(body.metadata.agent_id, 'nope');
    assert.equal(s.subscribers(), subscribed, 'no subscription was made');
  });

  it('a known agent, and no filter at all, still subscribe', async () => {
    const { agent_id } = await s.client.deploy({ name: 'known', wasm_module: example('echo') });
    for (const filter of [{ agent_id }, {}]) {
      const call = s.client.subscribe(filter);
      await new Promise<void>((resolve, reject) => {
        call.on('metadata', () => resolve());
        call.on('error', reject);
      });
      call.cancel();
    }
  });

  it('svc messages tail --agent nope exits with the not-found code and says why', async () => {
    const run = await runSvc(['messages', 'tail', '--agent', 'nope', '--server', s.address], cwd).done;
    assert.equal(run.code, EXIT.not_found, run.stderr);
    assert.match(run.stderr, /NOT_FOUND/);
    assert.match(run.stderr, /nope/);
  });
});
