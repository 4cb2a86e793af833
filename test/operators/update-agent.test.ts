/**
 * UpdateAgent over both doors and the CLI, against a real server on loopback
 * with real WASM: the module moves at a message boundary keeping its state
 * when the layouts agree, `_upgrade` runs after the restore, refusals name
 * the incompatibility and leave the agent as it was, and bad input answers
 * in the Error shape with the server still up.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../../src/cli/cli.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { assertError, failure, SUITE_TIMEOUT } from '../api/grpc/grpc-harness.js';
import { startCliServer, type CliServer } from '../cli/cli-server.js';
import { memoryIo } from '../cli/memory-io.js';
import { agentWhere, ask, assemblyScriptCounters, patch, request, V1, V1_TWO_PAGES, V2, V2_I64, V2_MIGRATES, V2_TRAPS, V2_UPGRADE_TRAPS } from './update-fixtures.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

let s: CliServer;
let dir: string;
before(async () => {
  s = await startCliServer(['--runtime.update_rollback_window=0']);
  dir = mkdtempSync(join(tmpdir(), 'svc-update-'));
});
after(async () => {
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function deploy(name: string, module: Uint8Array): Promise<string> {
  return (await s.client.deploy({ name, wasm_module: module })).agent_id;
}

describe('UpdateAgent', SUITE_TIMEOUT, () => {
  it('REST: the AssemblyScript counter becomes counter-v2 keeping its count; GetAgent shows both versions', async () => {
    const { v1, v2 } = await assemblyScriptCounters();
    const id = await deploy('update-as', v1);
    assert.equal(await ask(s, id, 'a'), '1');
    assert.equal(await ask(s, id, 'b'), '2');
    const updated = await patch(s, id, { keep_state: true }, v2);
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal(updated.body.module_version, 2);
    assert.equal(updated.body.module_sha256, sha256(v2));
    assert.deepEqual(updated.body.previous_module, { sha256: sha256(v1), version: 1, size: v1.byteLength });
    assert.equal(await ask(s, id, 'c'), '4', 'the count survived and version 2 counts in twos');
    const read = await request(s, 'GET', `/api/v1/agents/${id}`);
    assert.equal(read.body.module_version, 2);
    assert.deepEqual(read.body.previous_module, updated.body.previous_module);
    await s.client.undeploy(id);
  });

  it('gRPC: a hibernated or running agent takes a new module without keep_state from a fresh instance', async () => {
    const id = await deploy('update-fresh', V1);
    assert.equal(await ask(s, id, 'a'), '1');
    const agent = await s.client.update({ agent_id: id, wasm_module: V2, capabilities: ['counting'], resources: { cpu_shares: 2048 } });
    assert.equal(agent.module_version, 2);
    assert.deepEqual(agent.capabilities, ['counting']);
    assert.equal(agent.resources.cpu_shares, 2048);
    assert.equal(await ask(s, id, 'b'), '10', 'fresh state, version 2');
    await s.client.undeploy(id);
  });

  it('_upgrade runs after the restore, so a version can migrate its state', async () => {
    const id = await deploy('update-migrates', V1);
    assert.equal(await ask(s, id, 'a'), '1');
    await s.client.update({ agent_id: id, wasm_module: V2_MIGRATES, keep_state: true });
    assert.equal(await ask(s, id, 'b'), '101');
    await s.client.undeploy(id);
  });

  it('refuses a state that cannot move, naming why, and the agent keeps running as it was', async () => {
    const id = await deploy('update-incompatible', V1);
    assert.equal(await ask(s, id, 'a'), '1');
    const globals = await failure(s.client.update({ agent_id: id, wasm_module: V2_I64, keep_state: true }));
    assertError(globals, 'FAILED_PRECONDITION', 9, { reason: 'incompatible_globals', index: '0', previous: 'i32', next: 'i64' });
    assert.match(globals.message, /mutable global 0 is i32 in the running module and i64 in the new one/);
    const rest = await patch(s, id, { keep_state: true }, V2_I64);
    assert.equal(rest.status, 400);
    assert.equal(rest.body.code, 'FAILED_PRECONDITION');
    assert.equal(await ask(s, id, 'b'), '2', 'still version 1 with its count');
    assert.equal((await s.client.get(id)).module_version, 1);

    const big = await deploy('update-memory', V1_TWO_PAGES);
    assert.equal(await ask(s, big, 'a'), '1');
    assertError(await failure(s.client.update({ agent_id: big, wasm_module: V1, keep_state: true })), 'FAILED_PRECONDITION', 9, {
      reason: 'incompatible_memory',
      pages: '2',
      maximum: '1',
    });
    assert.equal(await ask(s, big, 'b'), '2');
    await s.client.undeploy(id);
    await s.client.undeploy(big);
  });

  it('a trap in _upgrade fails the update; the previous module runs on with its state', async () => {
    const id = await deploy('update-upgrade-traps', V1);
    assert.equal(await ask(s, id, 'a'), '1');
    const error = await failure(s.client.update({ agent_id: id, wasm_module: V2_UPGRADE_TRAPS, keep_state: true }));
    assertError(error, 'INVALID_MODULE', 3, { reason: 'upgrade_failed', failure: 'trap' });
    assert.equal(await ask(s, id, 'b'), '2');
    const agent = await s.client.get(id);
    assert.equal(agent.module_version, 1);
    assert.equal(agent.module_sha256, sha256(V1));
    assert.equal((await s.client.health()).status, 'healthy');
    await s.client.undeploy(id);
  });

  it('svc agents update NAME --module FILE --keep-state prints the agent at version 2', async () => {
    const id = await deploy('update-cli', V1);
    assert.equal(await ask(s, id, 'a'), '1');
    const file = join(dir, 'v2.wasm');
    writeFileSync(file, V2);
    const io = memoryIo({ cwd: dir });
    const code = await runCli(['agents', 'update', 'update-cli', '--module', file, '--keep-state', '--rollback-window', '5', '-o', 'json', ...s.server], io);
    assert.equal(code, EXIT.ok, io.stderr);
    assert.equal((JSON.parse(io.stdout) as { module_version: number }).module_version, 2);
    assert.equal(await ask(s, id, 'b'), '11');
    const refused = memoryIo({ cwd: dir });
    assert.equal(await runCli(['agents', 'update', id, '-f', file, '-k', '-w', 'soon', ...s.server], refused), EXIT.usage);
    assert.match(refused.stderr, /--rollback-window/);
    await s.client.undeploy(id);
  });

  it("a crash within the request's window (a duration) rolls back through the supervisor's restart", async () => {
    const id = await deploy('update-rollback-restart', V1);
    assert.equal(await ask(s, id, 'a'), '1');
    await s.client.update({ agent_id: id, wasm_module: V2_TRAPS, keep_state: true, rollback_window: '10m' });
    await s.client.send({ receiver: id, message_type: 'request', content: 'crashes version 2' });
    await agentWhere(s, id, (a) => a.module_version === 1 && a.state === 'running', 'rolled back');
    assert.equal(await ask(s, id, 'b'), '2', 'version 1 with its state');
    assert.equal((await s.client.get(id)).restart_count, 1);
    await s.client.undeploy(id);
  });

  it('a restart after an update runs the new module', async () => {
    const id = await deploy('update-then-restart', V1);
    await s.client.update({ agent_id: id, wasm_module: V2 });
    await s.client.restart(id);
    assert.equal(await ask(s, id, 'a'), '10');
    await agentWhere(s, id, (a) => a.module_version === 2, 'kept version 2');
    await s.client.undeploy(id);
  });

  it('bad input over both doors, in the Error shape, the server still up and the agent untouched', async () => {
    const unknown = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
    const rest = await patch(s, unknown, {}, V2);
    assert.equal(rest.status, 404);
    assert.equal(rest.body.code, 'NOT_FOUND');
    assert.match(String(rest.body.trace_id), /^[0-9a-f]{32}$/);
    assertError(await failure(s.client.update({ agent_id: unknown, wasm_module: V2 })), 'NOT_FOUND', 5, { agent_id: unknown });

    const id = await deploy('update-bad-input', V1);
    const garbage = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 99]);
    const invalidRest = await patch(s, id, {}, garbage);
    assert.equal(invalidRest.status, 422);
    assert.equal(invalidRest.body.code, 'INVALID_MODULE');
    assertError(await failure(s.client.update({ agent_id: id, wasm_module: garbage })), 'INVALID_MODULE', 3);
    assertError(await failure(s.client.update({ agent_id: id })), 'INVALID_ARGUMENT', 3, { field: 'wasm_module', reason: 'required' });
    assertError(await failure(s.client.update({ agent_id: id, keep_state: true, capabilities: ['x'] })), 'INVALID_ARGUMENT', 3, { reason: 'needs_module' });
    assertError(await failure(s.client.update({ agent_id: id, wasm_module: V2, rollback_window: '10 parsecs' })), 'INVALID_ARGUMENT', 3, {
      field: 'rollback_window',
      reason: 'invalid_window',
    });
    const window = await patch(s, id, { rollback_window: '-3' }, V2);
    assert.equal(window.status, 400);
    assert.equal((window.body.metadata as Record<string, string>).field, 'rollback_window');
    const wrongType = await request(s, 'PATCH', `/api/v1/agents/${id}`, { keep_state: 'yes' });
    assert.equal(wrongType.status, 400);
    assertError(await failure(s.client.update({ agent_id: '', wasm_module: V2 })), 'INVALID_ARGUMENT', 3, { field: 'agent_id' });

    assert.equal(await ask(s, id, 'still'), '1', 'nothing changed the agent');
    assert.equal((await s.client.get(id)).module_version, 1);
    assert.equal((await s.client.health()).status, 'healthy');
    await s.client.undeploy(id);
  });
});
