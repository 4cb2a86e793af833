/**
 * UpdateAgent's rollback window, failed agents and concurrent changes,
 * against a real server on loopback with real WASM (a server that allows no
 * restarts, so the first crash fails an agent).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { burner, compile } from '../agents/agent-wat.js';
import { assertError, failure, SUITE_TIMEOUT } from '../api/grpc/grpc-harness.js';
import { startCliServer, type CliServer } from '../cli/cli-server.js';
import { agentWhere, ask, metric, patch, V1, V2, V2_TRAPS } from './update-fixtures.js';

let s: CliServer;
before(async () => {
  // execution_slice 0: the race's busy agent must stay busy, not be cut and moved to the isolated lane.
  s = await startCliServer(['--runtime.restart_max_restarts=0', '--runtime.update_rollback_window=3', '--runtime.execution_slice=0']);
});
after(() => s.stop());

async function deploy(name: string, module: Uint8Array): Promise<string> {
  return (await s.client.deploy({ name, wasm_module: module })).agent_id;
}

describe('UpdateAgent: rollback, failed agents, concurrency', SUITE_TIMEOUT, () => {
  it('a crash within the window (the server default, 3 messages) brings version 1 back with its state', async () => {
    const rollbacks = await metric(s, /^svc_agent_rollbacks_total /);
    const id = await deploy('rollback-default', V1);
    assert.equal(await ask(s, id, 'a'), '1');
    assert.equal(await ask(s, id, 'b'), '2');
    const updated = await s.client.update({ agent_id: id, wasm_module: V2_TRAPS, keep_state: true });
    assert.equal(updated.module_version, 2);
    await s.client.send({ receiver: id, message_type: 'request', content: 'crashes version 2' });
    const back = await agentWhere(s, id, (a) => a.module_version === 1 && a.state === 'running', 'rolled back');
    assert.deepEqual((back.previous_module as { version: number }).version, 2, 'the crashed version is kept as the previous one');
    assert.equal(await ask(s, id, 'c'), '3', 'version 1, with the count it had at the update');
    assert.equal(await metric(s, /^svc_agent_rollbacks_total /), rollbacks + 1);
    await s.client.undeploy(id);
  });

  it('past the window a crash is an ordinary crash: no rollback (REST, window of 1 message)', async () => {
    const id = await deploy('rollback-past', V1);
    const crashing = await compile(`(module (memory (export "memory") 1 1) (global $count (mut i32) (i32.const 0))
      (func (export "handle") (global.set $count (i32.add (global.get $count) (i32.const 1))) (if (i32.gt_u (global.get $count) (i32.const 1)) (then unreachable))))`);
    const updated = await patch(s, id, { rollback_window: '1' }, crashing);
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    await s.client.send({ receiver: id, message_type: 'inform', content: 'first: handled' });
    await s.client.send({ receiver: id, message_type: 'inform', content: 'second: crashes, outside the window' });
    const failed = await agentWhere(s, id, (a) => a.state === 'failed', 'failed');
    assert.equal(failed.module_version, 2);
    await s.client.undeploy(id);
  });

  it('a failed agent is fixed by an update without keep_state; with keep_state it has no state to keep', async () => {
    const id = await deploy('update-failed', V1);
    await s.client.send({ receiver: id, message_type: 'request', content: 'boom!' });
    await agentWhere(s, id, (a) => a.state === 'failed', 'failed');
    assertError(await failure(s.client.update({ agent_id: id, wasm_module: V2, keep_state: true })), 'FAILED_PRECONDITION', 9, { reason: 'no_state' });
    const fixed = await patch(s, id, {}, V2);
    assert.equal(fixed.status, 200, JSON.stringify(fixed.body));
    assert.equal(fixed.body.state, 'running');
    assert.equal(fixed.body.module_version, 2);
    assert.equal(await ask(s, id, 'a'), '10');
    await s.client.undeploy(id);
  });

  it('of two concurrent updates (one per door) one wins and the other is ABORTED; the winner runs', async () => {
    const slow = burner(50_000_000);
    const id = await deploy('update-race', await compile(slow));
    await s.client.send({ receiver: id, message_type: 'request', content: 'keeps it busy' });
    await agentWhere(s, id, (a) => a.state === 'executing', 'executing');
    const quicker = await compile(burner(1));
    const [grpc, rest] = await Promise.allSettled([s.client.update({ agent_id: id, wasm_module: quicker }), patch(s, id, {}, quicker)]);
    const restWon = rest.status === 'fulfilled' && rest.value.status === 200;
    const grpcWon = grpc.status === 'fulfilled';
    assert.ok(restWon !== grpcWon, `exactly one wins: ${JSON.stringify({ grpc, rest })}`);
    if (grpcWon) {
      assert.ok(rest.status === 'fulfilled');
      assert.equal(rest.value.status, 409);
      assert.equal(rest.value.body.code, 'ABORTED');
      assert.equal((rest.value.body.metadata as Record<string, string>).reason, 'update_in_progress');
    } else {
      assert.ok(grpc.status === 'rejected');
      assertError(await failure(Promise.reject(grpc.reason)), 'ABORTED', 10, { reason: 'update_in_progress' });
    }
    assert.equal((await s.client.get(id)).module_version, 2);
    assert.equal(await ask(s, id, 'after'), 'done');
    await s.client.undeploy(id);
  });
});
