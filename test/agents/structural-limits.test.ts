/**
 * The per-agent limits of the spec's table that the agent ABI makes
 * structural, one test each: what enforces it, shown through a deploy or an
 * execution, plus the configuration refusing any other value.
 *
 * | limit                   | value | enforced by                                                     |
 * |-------------------------|-------|-----------------------------------------------------------------|
 * | max_network_connections | 0     | admission: no `sock_*` import (nor any other non-ABI import)     |
 * | max_spawned_processes   | 0     | admission: no `proc_*` import; WASI preview 1 cannot spawn      |
 * | max_threads_per_agent   | 1     | admission: no shared memory or atomics, no `thread-spawn`       |
 * | max_file_descriptors    | 10    | the WASI shim: fds 0, 1, 2 only; no `path_open` to make more    |
 * | max_disk_io_bytes       | cap   | the WASI shim: past the cap the execution fails (output_limit)  |
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/index.js';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { compile, fdProbe, importing, writer } from './agent-wat.js';
import { TEST_TIMEOUT_MS, ask, ctx, deploy, startTestServer, until, waitForState } from './agent-fixtures.js';

const refused = (metadata: Record<string, string>) => (error: unknown) =>
  isSvcError(error) && error.code === 'INVALID_MODULE' && Object.entries(metadata).every(([k, v]) => error.metadata[k] === v);

/** wabt will not write a shared memory without validating it, so the memory's limits flag is set by hand. */
async function sharedMemoryModule(): Promise<Uint8Array> {
  const bytes = await compile('(module (memory (export "memory") 1 1) (func (export "handle")))');
  // Memory section: id 5, size 4, one memory, flags 0x01 (has a maximum), min 1, max 1.
  const at = bytes.findIndex((_, i) => [5, 4, 1, 1, 1, 1].every((b, j) => bytes[i + j] === b));
  assert.ok(at > 0, 'memory section found');
  bytes[at + 3] = 0x03; // has a maximum, shared
  return bytes;
}

function configRefuses(key: string, value: string): void {
  assert.throws(() => loadConfig({ argv: [`--runtime.${key}=${value}`], env: {}, cwd: '/' }), (error) => error instanceof ConfigError && error.key === `runtime.${key}`);
}

describe('structural per-agent limits', { timeout: TEST_TIMEOUT_MS }, () => {
  it('max_network_connections 0: a module importing socket calls is refused at deploy', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      for (const call of ['sock_accept', 'sock_recv', 'sock_send', 'sock_shutdown']) {
        const module = await compile(importing(`(import "wasi_snapshot_preview1" "${call}" (func (param i32 i32 i32) (result i32)))`));
        await assert.rejects(deploy(t, module, call), refused({ reason: 'forbidden_import', import: `wasi_snapshot_preview1.${call}` }));
      }
      configRefuses('max_network_connections', '1');
    } finally {
      await t.stop();
    }
  });

  it('max_spawned_processes 0: process calls are refused at deploy', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      for (const call of ['proc_exit', 'proc_raise']) {
        const module = await compile(importing(`(import "wasi_snapshot_preview1" "${call}" (func (param i32)))`));
        await assert.rejects(deploy(t, module, call), refused({ reason: 'forbidden_import', import: `wasi_snapshot_preview1.${call}` }));
      }
      configRefuses('max_spawned_processes', '1');
    } finally {
      await t.stop();
    }
  });

  it('max_threads_per_agent 1: shared memory, atomics and thread-spawn are refused at deploy', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const shared = await sharedMemoryModule();
      await assert.rejects(deploy(t, shared, 'shared'), refused({ reason: 'forbidden_feature', feature: 'threads' }));
      const atomics = await compile('(module (memory (export "memory") 1 1) (func (export "handle") (atomic.fence)))', { threads: true });
      await assert.rejects(deploy(t, atomics, 'atomics'), refused({ reason: 'forbidden_feature', feature: 'threads' }));
      const spawn = await compile(importing('(import "wasi" "thread-spawn" (func (param i32) (result i32)))'));
      await assert.rejects(deploy(t, spawn, 'spawn'), refused({ reason: 'forbidden_import', import: 'wasi.thread-spawn' }));
      configRefuses('max_threads_per_agent', '2');
    } finally {
      await t.stop();
    }
  });

  it('max_file_descriptors: fd 3 is EBADF, and no call can open another', async () => {
    const t = await startTestServer({ clock: createSimulatedClock() });
    try {
      const events = t.events();
      const probe = await deploy(t, await compile(fdProbe(3)), 'fd3');
      assert.equal((await ask(t, events, probe, 'write to fd 3')).content, '8', 'EBADF');
      const far = await deploy(t, await compile(fdProbe(1000)), 'fd1000');
      assert.equal((await ask(t, events, far, 'write to fd 1000')).content, '8');
      const open = await compile(importing('(import "wasi_snapshot_preview1" "path_open" (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))'));
      await assert.rejects(deploy(t, open, 'opener'), refused({ reason: 'forbidden_import', import: 'wasi_snapshot_preview1.path_open' }));
      // Below what the ABI gives every agent; the reference value 10 is met by those three.
      configRefuses('max_file_descriptors', '2');
    } finally {
      await t.stop();
    }
  });

  it('max_disk_io_bytes: writing past the cap fails the execution, which is a crash of the agent', async () => {
    const clock = createSimulatedClock();
    const t = await startTestServer({ clock, overrides: { 'runtime.max_disk_io_bytes': '64KiB' } });
    try {
      const events = t.events();
      const small = await deploy(t, await compile(writer(1_000)), 'small');
      const big = await deploy(t, await compile(writer(100_000)), 'big');
      const failure = await ask(t, events, big, 'write');
      assert.equal(failure.message_type, 'failure');
      assert.match(String(failure.content), /^execution crashed: output_limit/);
      await waitForState(t, big, 'restarting');
      await clock.advance(100);
      await waitForState(t, big, 'running');
      assert.equal((await t.service.get(big, ctx)).restart_count, 1);
      // Under the cap: not a message (no JSON), so a counted line error, not a crash.
      await t.service.send({ receiver: small, message_type: 'request', content: 'write' }, ctx);
      await until(() => t.host().stats().outputLineErrors === 1, 'the line error to be counted');
      assert.equal((await t.service.get(small, ctx)).restart_count, 0);
      assert.equal(t.host().get(small)!.state, 'running');
    } finally {
      await t.stop();
    }
  });
});
