/**
 * `svc run FILE.wasm --message JSON`: one message through an agent in the
 * server's own sandbox, without a server (real admission, a real executor
 * worker, real WASM): the reply on stdout, log lines on stderr, and every
 * bad input a clear line and its exit code.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { runCli } from '../../src/cli/cli.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { CRASHABLE_COUNTER, burner, compile } from '../agents/agent-wat.js';
import { memoryIo } from './memory-io.js';

const built = await ensureExamplesBuilt();
const dir = mkdtempSync(join(tmpdir(), 'svc-run-'));
const counter = join(dir, 'counter.wasm');
writeFileSync(counter, await compile(CRASHABLE_COUNTER));
/** An execution of 10^8 iterations: far past the shared lane's slice, well within the default fuel. */
const busy = join(dir, 'busy.wasm');
writeFileSync(busy, await compile(burner(100_000_000)));
after(() => rmSync(dir, { recursive: true, force: true }));

async function svc(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo({ cwd: dir });
  const code = await runCli(args, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

describe('svc run', { timeout: 120_000 }, () => {
  it('prints the reply as one JSON line, in reply to the message, from the local agent', async () => {
    const run = await svc('run', built.get('echo') ?? '', '--message', '{"message_type":"request","content":"hi","reply_with":"r-1"}');
    assert.equal(run.code, EXIT.ok, run.stderr);
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 1);
    assert.deepEqual([lines[0]?.sender, lines[0]?.receiver, lines[0]?.message_type, lines[0]?.content, lines[0]?.in_reply_to], ['local', 'client:local', 'inform', 'hi', 'r-1']);
  });

  it('log lines go to stderr, and no reply means no stdout', async () => {
    const run = await svc('run', built.get('pong') ?? '', '-m', '{"message_type":"inform"}');
    assert.equal(run.code, EXIT.ok, run.stderr);
    assert.equal(run.stdout, '');
    assert.equal(run.stderr, 'pong: ignored inform from client:local\n');
  });

  it('a long execution gets its whole fuel: no execution_slice for the one agent of svc run', async () => {
    const run = await svc('run', busy, '-m', '{"message_type":"request"}');
    assert.equal(run.code, EXIT.ok, run.stderr);
    assert.match(run.stdout, /"content":"done"/);
  });

  it('a trap is a failed execution: exit 1 and its reason', async () => {
    const run = await svc('run', counter, '-m', '{"message_type":"request","content":"boom!"}');
    assert.equal(run.code, EXIT.failure);
    assert.match(run.stderr, /^svc: the execution failed: trap: /m);
  });

  it('bad input: not JSON, no message_type, a module the ABI refuses, no file', async () => {
    const notJson = await svc('run', counter, '-m', 'hello');
    assert.equal(notJson.code, EXIT.usage);
    assert.match(notJson.stderr, /--message takes a JSON object/);
    const untyped = await svc('run', counter, '-m', '{"content":"x"}');
    assert.equal(untyped.code, EXIT.rejected);
    assert.match(untyped.stderr, /INVALID_ARGUMENT/);
    const notWasm = join(dir, 'not.wasm');
    writeFileSync(notWasm, 'not wasm');
    const refused = await svc('run', notWasm);
    assert.equal(refused.code, EXIT.rejected);
    assert.match(refused.stderr, /INVALID_MODULE/);
    assert.notEqual((await svc('run', join(dir, 'missing.wasm'))).code, EXIT.ok);
  });
});
