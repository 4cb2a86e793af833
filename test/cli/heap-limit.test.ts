/**
 * `runtime.heap_limit`: `svc start` runs the server under that V8 heap limit
 * (issue 41: the heap limit is set from configuration, not left to Node).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { heapLimitExecArgv } from '../../src/cli/heap-limit.js';
import { runCli } from './run-cli.js';

const MIB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), 'svc-heap-limit-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('the V8 heap limit from runtime.heap_limit', () => {
  it('asks for a restart under --max-old-space-size only when the flag is missing or differs', () => {
    assert.equal(heapLimitExecArgv(['--import', 'tsx'], 0), undefined, '0 keeps Node\'s limit');
    assert.deepEqual(heapLimitExecArgv(['--max-semi-space-size=64'], 512 * MIB), ['--max-semi-space-size=64', '--max-old-space-size=512']);
    assert.equal(heapLimitExecArgv(['--max-old-space-size=512'], 512 * MIB), undefined, 'the restarted server runs itself');
    assert.deepEqual(heapLimitExecArgv(['--max-old-space-size=4096', '--x'], 512 * MIB), ['--x', '--max-old-space-size=512']);
  });

  it('svc start runs the server under the configured limit and drains on SIGTERM to the svc process', async () => {
    const run = await runCli(['start'], {
      cwd: dir,
      env: { SVC_HTTP_ADDR: '127.0.0.1:0', SVC_GRPC_ADDR: '127.0.0.1:0', SVC_METRICS_ADDR: '127.0.0.1:0', SVC_RUNTIME_HEAP_LIMIT: '300MiB' },
      untilStdout: '"msg":"listening"',
    });
    assert.equal(run.code, 0, run.stderr);
    const listening = run.stdout.split('\n').find((l) => l.includes('"msg":"listening"'));
    assert.ok(listening !== undefined, run.stdout);
    const heapLimit = (JSON.parse(listening) as { heap_limit: number }).heap_limit;
    // The old generation's 300 MiB plus the young generation V8 adds to it.
    assert.ok(heapLimit >= 300 * MIB && heapLimit < 500 * MIB, `heap_size_limit ${heapLimit}`);
    assert.ok(run.stdout.includes('"msg":"shutting down"'), 'the server drained');
  });
});
