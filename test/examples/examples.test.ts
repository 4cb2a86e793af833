/**
 * The AssemblyScript example agents (examples/) against the agent ABI: the shape of
 * each built module, its behaviour under the platform's WASI shim, and
 * the platform's own admission and executor pool. Builds the examples first when
 * they are missing or older than their sources.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import wabtInit from 'wabt';
import { EXAMPLE_MAXIMUM_MEMORY_PAGES, ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { createSimulatedClock } from '../../supervisors/index.js';
import { loadConfig } from '../../src/config/load.js';
import { encodeIncoming, parseOutput, type IncomingMessage, type OutgoingMessage } from '../../src/sandbox/abi.js';
import { createAdmission } from '../../src/sandbox/admission.js';
import { createExecutorPool, type ExecutorPool } from '../../src/sandbox/executor-pool.js';
import { outputLimitsFrom, sandboxLimitsFrom } from '../../src/sandbox/limits.js';
import type { AdmittedModule, ExecutionResult, InstanceHandle, InstanceSnapshot } from '../../src/sandbox/types.js';
import { validateModule } from '../../src/sandbox/validate.js';
import { createFdTable, createWasiShim } from '../../src/sandbox/wasi.js';
import { wat } from '../helpers/wat.js';

const EXAMPLES = ['counter', 'crasher', 'echo', 'ping', 'pong', 'relay', 'tracer'] as const;
type Example = (typeof EXAMPLES)[number];

const WASI_SIGNATURES: Readonly<Record<string, string>> = {
  fd_read: '(param i32 i32 i32 i32) (result i32)',
  fd_write: '(param i32 i32 i32 i32) (result i32)',
  fd_close: '(param i32) (result i32)',
  clock_time_get: '(param i32 i64 i32) (result i32)',
  random_get: '(param i32 i32) (result i32)',
};

/** The ABI's features (MVP plus these four); every other proposal is off. */
const ABI_FEATURES = {
  mutable_globals: true, sat_float_to_int: true, sign_extension: true, multi_value: true,
  bulk_memory: false, reference_types: false, simd: false, relaxed_simd: false, threads: false, exceptions: false,
  tail_call: false, gc: false, memory64: false, extended_const: false, function_references: false,
  annotations: false, code_metadata: false,
};

// Defaults only: no svc.toml lives here and no environment is read.
const config = loadConfig({ cwd: fileURLToPath(new URL('.', import.meta.url)) });
const LIMITS = sandboxLimitsFrom(config.runtime);

// Top-level, so that every agent found in examples/agents/ gets the module checks below.
const built = await ensureExamplesBuilt();
const modules = new Map<string, Uint8Array>();
const compiled = new Map<string, WebAssembly.Module>();
for (const [name, path] of built) {
  const bytes = new Uint8Array(await readFile(path));
  modules.set(name, bytes);
  compiled.set(name, await WebAssembly.compile(bytes));
}

function bytesOf(name: string): Uint8Array {
  const bytes = modules.get(name);
  assert.ok(bytes, `examples/agents/${name}.ts is missing`);
  return bytes;
}

function compiledOf(name: string): WebAssembly.Module {
  const module = compiled.get(name);
  assert.ok(module, `examples/agents/${name}.ts is missing`);
  return module;
}

let wabtReady: ReturnType<typeof wabtInit> | undefined;

/** Decodes with wabt under the ABI's feature set (throws on anything else) and prints the module as text. */
async function abiText(bytes: Uint8Array): Promise<string> {
  wabtReady ??= wabtInit();
  const wabt = await wabtReady;
  const module = wabt.readWasm(bytes, { readDebugNames: false, ...ABI_FEATURES });
  try {
    module.validate();
    return module.toText({});
  } finally {
    module.destroy();
  }
}

describe('built modules', () => {
  test('the examples the tests below rely on are all there', () => {
    assert.deepEqual(EXAMPLES.filter((name) => !built.has(name)), []);
  });

  for (const name of built.keys()) {
    test(`${name}: imports only the five WASI calls, with their exact signatures`, async () => {
      const imports = WebAssembly.Module.imports(compiledOf(name));
      for (const imp of imports) {
        assert.equal(imp.module, 'wasi_snapshot_preview1', `${imp.module}.${imp.name}`);
        assert.equal(imp.kind, 'function', imp.name);
        assert.ok(imp.name in WASI_SIGNATURES, `forbidden import ${imp.name}`);
      }
      const text = await abiText(bytesOf(name));
      const types = new Map([...text.matchAll(/\(type \(;(\d+);\) \(func ?(.*)\)\)/g)].map((m) => [m[1], m[2]]));
      const imported = [...text.matchAll(/\(import "wasi_snapshot_preview1" "(\w+)" \(func \(;\d+;\) \(type (\d+)\)\)\)/g)];
      assert.equal(imported.length, imports.length);
      for (const [, call, type] of imported) assert.equal(types.get(type!), WASI_SIGNATURES[call!], call);
    });

    test(`${name}: exports memory, handle and _initialize; a bounded memory; no start section`, async () => {
      const exports = Object.fromEntries(WebAssembly.Module.exports(compiledOf(name)).map((e) => [e.name, e.kind]));
      // counter-v2 is the version 2 of an update that keeps state: it migrates in `_upgrade`.
      const upgrade = name === 'counter-v2' ? { _upgrade: 'function' } : {};
      assert.deepEqual(exports, { memory: 'memory', handle: 'function', _initialize: 'function', ...upgrade });
      const text = await abiText(bytesOf(name));
      const memory = /\(memory \(;0;\) (\d+) (\d+)\)/.exec(text);
      assert.ok(memory, 'the memory declares a maximum');
      assert.equal(Number(memory[2]), EXAMPLE_MAXIMUM_MEMORY_PAGES);
      assert.ok(Number(memory[2]) <= LIMITS.maxMemoryPages);
      assert.doesNotMatch(text, /\(start /);
    });

    test(`${name}: passes the platform's validator unchanged`, () => {
      const info = validateModule(bytesOf(name), LIMITS);
      assert.equal(info.startExport, '_initialize');
      assert.equal(info.hasStartSection, false);
      assert.deepEqual(info.memory, { initialPages: 1, maximumPages: EXAMPLE_MAXIMUM_MEMORY_PAGES, lowered: false });
      for (const call of info.imports) assert.ok(call in WASI_SIGNATURES, call);
    });
  }

  test('the feature check above has teeth: bulk memory is refused', async () => {
    const bulk = await wat('(module (memory 1 1) (func (memory.fill (i32.const 0) (i32.const 0) (i32.const 8))))', { bulk_memory: true });
    await assert.rejects(abiText(bulk));
  });
});

// ---------------------------------------------------------------------------
// Agents run on the main thread with the platform's own WASI shim, so each
// test sees exactly what one `handle` call reads and writes.

interface Run {
  stdout: string[];
  stderr: string[];
  /** What the call threw (a trap is a WebAssembly.RuntimeError), or null. */
  error: unknown;
}

const TEST_OUTPUT_LIMITS = { maxOutputBytes: 4 * 1024 * 1024, maxOutputMessages: 1000, maxLogBytes: 1024 * 1024 };

class TestHost {
  readonly instance: WebAssembly.Instance;
  private readonly shim = createWasiShim(TEST_OUTPUT_LIMITS);
  private readonly fds = createFdTable();

  constructor(module: WebAssembly.Module) {
    this.instance = new WebAssembly.Instance(module, this.shim.imports);
  }

  get memory(): WebAssembly.Memory {
    return this.instance.exports['memory'] as WebAssembly.Memory;
  }

  private run(exportName: string, input: Uint8Array): Run {
    this.shim.begin(this.memory, this.fds, input);
    let error: unknown = null;
    try {
      (this.instance.exports[exportName] as () => void)();
    } catch (thrown) {
      error = thrown;
    }
    const out = this.shim.end();
    return { stdout: out.stdout, stderr: out.stderr, error };
  }

  initialize(): Run {
    return this.run('_initialize', new Uint8Array(0));
  }

  deliver(message: IncomingMessage | string): Run {
    const text = typeof message === 'string' ? message : JSON.stringify(message);
    return this.run('handle', new TextEncoder().encode(text));
  }
}

function startAgent(name: Example): TestHost {
  const host = new TestHost(compiledOf(name));
  const init = host.initialize();
  assert.equal(init.error, null);
  assert.deepEqual(init.stdout, []);
  return host;
}

function incoming(content: string, extra: Partial<IncomingMessage> = {}): IncomingMessage {
  return { message_id: 'm-1', sender: 'client:alice', receiver: 'agent', message_type: 'request', content, ...extra };
}

function replies(run: Run): unknown[] {
  assert.equal(run.error, null, String(run.error));
  return run.stdout.map((line) => JSON.parse(line) as unknown);
}

describe('SDK and agents under the WASI shim', () => {
  test('echo replies inform with the content, escapes and all of Unicode intact', () => {
    const echo = startAgent('echo');
    for (const content of ['', 'hello', 'quote " backslash \\ slash / tab \t nl \n cr \r ctl \u0001 \u001f', 'héllo wörld ✓ 😀 𝄞', 'x'.repeat(100_000)]) {
      assert.deepEqual(replies(echo.deliver(incoming(content))), [{ message_type: 'inform', content }]);
    }
  });

  test('echo decodes \\u escapes, surrogate pairs, and a lone surrogate as U+FFFD', () => {
    const echo = startAgent('echo');
    const raw = '{"message_type":"request","sender":"s","content":"\\u0041\\u00e9\\u2713\\ud83d\\ude00\\ud800x\\/"}';
    assert.deepEqual(replies(echo.deliver(raw)), [{ message_type: 'inform', content: 'Aé✓😀\ufffdx/' }]);
  });

  test('unknown keys, nested values, nulls, numbers and camelCase names are taken in stride', () => {
    const echo = startAgent('echo');
    const raw = JSON.stringify({
      extra: { deep: [1, { a: '}]' }, [[]]], more: null }, message_id: 'm-7', sender: 'client:bob',
      metadata: { traceparent: '00-abc-def-01', nested: { x: [1, 2] }, n: 3, none: null },
      created_at: 1_700_000_000, reply_with: null, flags: [true, false, null, -1.5e3], messageType: 'request', content: 'still here',
    });
    assert.deepEqual(replies(echo.deliver(raw)), [{ message_type: 'inform', content: 'still here' }]);
  });

  test('a content that is not a JSON string arrives as its JSON text, null as empty', () => {
    const echo = startAgent('echo');
    const cases: Array<[unknown, string]> = [[{ a: [1, 'x', { b: null }] }, '{"a":[1,"x",{"b":null}]}'], [42, '42'], [true, 'true'], [null, '']];
    for (const [content, text] of cases) {
      const raw = JSON.stringify({ message_type: 'request', sender: 's', content });
      assert.deepEqual(replies(echo.deliver(raw)), [{ message_type: 'inform', content: text }]);
    }
  });

  test('input that is not a JSON object is logged, not a crash', () => {
    const echo = startAgent('echo');
    for (const raw of ['', 'not json', '[1,2]', '{"content":"x"', '{"content":"x"} trailing']) {
      const run = echo.deliver(raw);
      assert.equal(run.error, null, raw);
      assert.deepEqual(run.stdout, []);
      assert.deepEqual(run.stderr, ['sdk: the incoming message is not a JSON object'], raw);
    }
    assert.deepEqual(replies(echo.deliver(incoming('after'))), [{ message_type: 'inform', content: 'after' }]);
    const pages = echo.memory.buffer.byteLength;
    for (let i = 0; i < 500; i++) echo.deliver(`{"content":"${'x'.repeat(4_000)}",}`);
    assert.equal(echo.memory.buffer.byteLength, pages, 'rejected input is collected too');
  });

  test('counter keeps its count across messages', () => {
    const counter = startAgent('counter');
    const counts = [1, 2, 3].map(() => replies(counter.deliver(incoming('tick'))));
    assert.deepEqual(counts, ['1', '2', '3'].map((content) => [{ message_type: 'inform', content }]));
  });

  test('memory stays bounded over 2,000 large messages: their garbage is collected as it comes', () => {
    const echo = startAgent('echo');
    const content = 'payload '.repeat(2_000);
    const pagesAfter = (n: number): number => {
      for (let i = 0; i < n; i++) assert.equal(echo.deliver(incoming(content)).error, null);
      return echo.memory.buffer.byteLength / 65_536;
    };
    const warm = pagesAfter(50);
    assert.equal(pagesAfter(2_000), warm);
    assert.ok(warm <= 4, `${warm} pages`);
  });

  test('echo carries what docs/agent-abi.md promises in its 16 pages: messages of 128 KiB one after another; 256 KiB traps (issue 41)', () => {
    const echo = startAgent('echo');
    const content = 'x'.repeat(128 * 1024);
    for (let i = 0; i < 20; i++) assert.deepEqual(replies(echo.deliver(incoming(content, { message_id: `m-${i}` }))), [{ message_type: 'inform', content }], `message ${i}`);
    assert.equal(echo.memory.buffer.byteLength / 65_536, EXAMPLE_MAXIMUM_MEMORY_PAGES);
    const tooLarge = startAgent('echo').deliver(incoming('x'.repeat(256 * 1024)));
    assert.match(String(tooLarge.error), /unreachable/);
  });

  test('memory stays flat over 2,000 small messages, collected every few messages', () => {
    const pong = startAgent('pong');
    const ping = incoming('ping', { sender: 'ping-agent', conversation_id: 'ping-1a2b3c4d', created_at: '2026-01-01T00:00:00.000Z', metadata: {} });
    const pagesAfter = (n: number): number => {
      for (let i = 0; i < n; i++) assert.deepEqual(replies(pong.deliver({ ...ping, message_id: `m-${i}` })), [{ message_type: 'inform', content: 'pong' }]);
      return pong.memory.buffer.byteLength / 65_536;
    };
    const warm = pagesAfter(50);
    assert.equal(pagesAfter(2_000), warm);
    assert.equal(warm, 1, 'the garbage of a few small messages fits the first page');
  });

  test('pong answers a ping request and ignores everything else', () => {
    const pong = startAgent('pong');
    assert.deepEqual(replies(pong.deliver(incoming('ping', { sender: 'ping-agent' }))), [{ message_type: 'inform', content: 'pong' }]);
    const other = pong.deliver(incoming('ping', { message_type: 'inform', sender: 'x' }));
    assert.deepEqual(other.stdout, []);
    assert.deepEqual(other.stderr, ['pong: ignored inform from x']);
  });

  test('relay starts on the agent its start message names and answers everything else with the same content', () => {
    const relay = startAgent('relay');
    assert.deepEqual(replies(relay.deliver(incoming('relay:agent-b'))), [{ receiver: 'agent-b', message_type: 'inform', content: 'relay' }]);
    assert.deepEqual(replies(relay.deliver(incoming('relay', { sender: 'agent-b', message_type: 'inform' }))), [{ message_type: 'inform', content: 'relay' }]);
  });

  test('ping plays the number of rounds in its start message against pong', () => {
    const ping = startAgent('ping');
    const pong = startAgent('pong');
    const start = ping.deliver(incoming('start:pong-1:3', { receiver: 'ping-1' }));
    assert.match(start.stderr[0] ?? '', /^ping: 3 rounds with pong-1 in ping-[0-9a-f]+$/);
    const conversation = /in (ping-[0-9a-f]+)$/.exec(start.stderr[0]!)![1];
    let pings = replies(start);
    let exchanged = 0;
    let last: Run = start;
    while (pings.length > 0) {
      assert.deepEqual(pings, [{ receiver: 'pong-1', message_type: 'request', content: 'ping', conversation_id: conversation }]);
      const answer = pong.deliver(incoming('ping', { sender: 'ping-1', receiver: 'pong-1', conversation_id: conversation }));
      assert.deepEqual(replies(answer), [{ message_type: 'inform', content: 'pong' }]);
      exchanged++;
      last = ping.deliver(incoming('pong', { sender: 'pong-1', receiver: 'ping-1', message_type: 'inform' }));
      pings = replies(last);
    }
    assert.equal(exchanged, 3);
    assert.match(last.stderr[0] ?? '', /^ping: done, 3 pongs from pong-1 in \d+ ms$/);
    const stray = ping.deliver(incoming('pong', { sender: 'pong-1', message_type: 'inform' }));
    assert.deepEqual(stray.stdout, []);
    assert.deepEqual(stray.stderr, ['ping: ignored inform from pong-1']);
  });

  test('ping defaults to 3 rounds, clamps the count to 1..10000, and rejects a start without an agent id', () => {
    const ping = startAgent('ping');
    assert.match(ping.deliver(incoming('start:pong-1')).stderr[0] ?? '', /^ping: 3 rounds with pong-1 /);
    assert.match(ping.deliver(incoming('start:a:b:12')).stderr[0] ?? '', /^ping: 12 rounds with a:b /);
    assert.match(ping.deliver(incoming('start:a:0')).stderr[0] ?? '', /^ping: 1 rounds with a /);
    assert.match(ping.deliver(incoming('start:a:99999999999999999999')).stderr[0] ?? '', /^ping: 10000 rounds with a /);
    const empty = ping.deliver(incoming('start:'));
    assert.deepEqual(empty.stdout, []);
    assert.deepEqual(empty.stderr, ['ping: start needs a pong agent id']);
  });

  test('tracer lists the metadata it was handed: string keys in order, scalars as text, nested values skipped', () => {
    const tracer = startAgent('tracer');
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const metadata = { traceparent, tracestate: 'svc=1,other=x', nested: { x: [1, '}'] }, list: [], n: 3, none: null, 'k\u00e9y "q"': 'v\u2713' };
    assert.deepEqual(replies(tracer.deliver(incoming('x', { metadata: metadata as unknown as Record<string, string> }))), [
      { message_type: 'inform', content: `traceparent=${traceparent}\ntracestate=svc=1,other=x\nn=3\nnone=\nk\u00e9y "q"=v\u2713` },
    ]);
    // Read when asked, after the message's bytes are gone: the next message (without metadata) overwrote them.
    for (const extra of [{}, { metadata: {} }, { metadata: null }, { metadata: 'stray' }]) {
      assert.deepEqual(replies(tracer.deliver(incoming('x', extra as Partial<IncomingMessage>))), [{ message_type: 'inform', content: '' }], JSON.stringify(extra));
    }
  });

  test('metadata that is not a well-formed object of string keys makes the message unreadable, as any malformed field does', () => {
    const tracer = startAgent('tracer');
    for (const metadata of ['{"a":}', '{"a" 1}', '{1:2}', '{"a":1,}', '{"a":1', '{"a":[1}']) {
      const run = tracer.deliver(`{"message_type":"request","sender":"s","metadata":${metadata},"content":"x"}`);
      assert.equal(run.error, null, metadata);
      assert.deepEqual(run.stdout, [], metadata);
      assert.deepEqual(run.stderr, ['sdk: the incoming message is not a JSON object'], metadata);
    }
    assert.deepEqual(replies(tracer.deliver(incoming('x', { metadata: { a: 'b' } }))), [{ message_type: 'inform', content: 'a=b' }]);
  });

  test('strings are read whole wherever a quote, an escape or a non-ASCII character falls among the eight-byte words the SDK scans', () => {
    const echo = startAgent('echo');
    const tracer = startAgent('tracer');
    for (let length = 0; length <= 20; length++) {
      const texts = ['a'.repeat(length)];
      for (let at = 0; at < length; at++) {
        for (const special of ['"', '\\', '\u00e9', '\u2713', '\u{1f600}', '\n']) texts.push('a'.repeat(at) + special + 'a'.repeat(length - at - 1));
      }
      for (const text of texts) {
        assert.deepEqual(replies(echo.deliver(incoming(text))), [{ message_type: 'inform', content: text }], JSON.stringify(text));
        // Metadata is skipped word by word when the message is read, and read when the agent asks.
        assert.deepEqual(replies(tracer.deliver(incoming('x', { metadata: { k: text, [`${text}|`]: 'v' } }))), [{ message_type: 'inform', content: `k=${text}\n${text}|=v` }], JSON.stringify(text));
      }
    }
    // A string that never closes, ending at or near a word's edge, makes the message unreadable.
    for (let length = 0; length <= 20; length++) {
      for (const raw of [`{"message_type":"request","content":"${'a'.repeat(length)}`, `{"message_type":"request","metadata":{"k":"${'a'.repeat(length)}`]) {
        const run = echo.deliver(raw);
        assert.deepEqual(run.stdout, [], raw);
        assert.deepEqual(run.stderr, ['sdk: the incoming message is not a JSON object'], raw);
      }
    }
  });

  test('crasher traps on "crash", and aborts with a line on fd 2 on "abort" and "throw"', () => {
    const crasher = startAgent('crasher');
    assert.deepEqual(replies(crasher.deliver(incoming('hello'))), [{ message_type: 'inform', content: 'ok' }]);

    const crash = startAgent('crasher').deliver(incoming('crash'));
    assert.ok(crash.error instanceof WebAssembly.RuntimeError);
    assert.deepEqual(crash.stderr, []);

    const abort = startAgent('crasher').deliver(incoming('abort'));
    assert.ok(abort.error instanceof WebAssembly.RuntimeError);
    assert.deepEqual(abort.stderr, ['abort: abort requested by message m-1']);

    const thrown = startAgent('crasher').deliver(incoming('throw'));
    assert.ok(thrown.error instanceof WebAssembly.RuntimeError);
    assert.match(thrown.stderr.join('\n'), /^abort: throw requested by message m-1 at examples\/agents\/crasher\.ts:\d+:\d+$/);
  });
});

// ---------------------------------------------------------------------------
// The platform's own path: admission (validate, instrument, compile), executor pool, ABI output parsing.

describe('examples in the platform sandbox', () => {
  let pool: ExecutorPool;
  const admitted = new Map<Example, AdmittedModule>();
  /** The deployed instances by agent id. */
  const instances = new Map<string, InstanceHandle>();
  const FUEL = 50_000_000n;

  before(async () => {
    const admission = createAdmission(LIMITS);
    for (const name of EXAMPLES) admitted.set(name, await admission.admit(bytesOf(name)));
    pool = createExecutorPool({
      workers: 1,
      spareWorkers: 0,
      wasmMemoryLimitBytes: 64 * 1024 * 1024,
      fuelPerExecution: FUEL,
      executionTimeoutMs: 5_000,
      startupTimeoutMs: 5_000,
      outputLimits: outputLimitsFrom(config.runtime),
      // The watchdog stands still: fuel alone stops these agents.
      clock: createSimulatedClock(),
    });
  });

  after(() => pool.close());

  async function deploy(agentId: string, name: Example, snapshot?: InstanceSnapshot): Promise<void> {
    const memoryLimitBytes = EXAMPLE_MAXIMUM_MEMORY_PAGES * 65_536;
    const placed = await pool.instantiate(admitted.get(name)!, { label: agentId, memoryLimitBytes, ...(snapshot === undefined ? {} : { snapshot }) });
    assert.deepEqual(placed.log, []);
    instances.set(agentId, placed.instance);
  }

  function execute(agentId: string, message: IncomingMessage): Promise<ExecutionResult> {
    return new Promise((resolve) => pool.execute(instances.get(agentId)!, encodeIncoming(message), resolve));
  }

  async function send(agentId: string, message: IncomingMessage): Promise<{ result: ExecutionResult; out: OutgoingMessage[] }> {
    const result = await execute(agentId, message);
    const { messages, errors } = parseOutput(result.stdout, message, agentId);
    assert.deepEqual(errors, []);
    return { result, out: messages };
  }

  test('echo: the reply goes back to the sender in the same conversation', async () => {
    await deploy('echo-1', 'echo');
    const { result, out } = await send('echo-1', incoming('héllo 😀', { receiver: 'echo-1', conversation_id: 'c-1', reply_with: 'r-1' }));
    assert.equal(result.ok, true);
    assert.deepEqual(out, [{ sender: 'echo-1', receiver: 'client:alice', message_type: 'inform', content: 'héllo 😀', conversation_id: 'c-1', in_reply_to: 'r-1' }]);
    assert.ok(result.fuelUsed > 0n && result.fuelUsed < FUEL);
  });

  test('counter: the count survives a snapshot and a fresh instance (hibernation)', async () => {
    await deploy('counter-1', 'counter');
    const count = async (): Promise<unknown> => (await send('counter-1', incoming('tick'))).out.map((m) => m.content);
    assert.deepEqual([await count(), await count()], [['1'], ['2']]);
    const snapshot = await pool.snapshot(instances.get('counter-1')!);
    await pool.release(instances.get('counter-1')!);
    await deploy('counter-1', 'counter', snapshot);
    assert.deepEqual(await count(), ['3']);
  });

  test('ping and pong play three rounds through the pool', async () => {
    await deploy('ping-1', 'ping');
    await deploy('pong-1', 'pong');
    let queue: IncomingMessage[] = [incoming('start:pong-1:3', { receiver: 'ping-1' })];
    const seen: string[] = [];
    for (let n = 0; queue.length > 0; n++) {
      assert.ok(n < 20, 'the game ends');
      const next: IncomingMessage[] = [];
      for (const message of queue) {
        const { result, out } = await send(message.receiver, message);
        assert.equal(result.ok, true);
        for (const m of out) {
          seen.push(`${m.sender}->${m.receiver} ${m.message_type} ${String(m.content)}`);
          next.push({ ...m, message_id: `m-${seen.length}`, content: m.content as string });
        }
      }
      queue = next;
    }
    const round = ['ping-1->pong-1 request ping', 'pong-1->ping-1 inform pong'];
    assert.deepEqual(seen, [...round, ...round, ...round]);
  });

  test('crasher: "loop" runs out of fuel; "crash" and "abort" are traps, the abort line kept', async () => {
    await deploy('crasher-1', 'crasher');
    const loop = await execute('crasher-1', incoming('loop'));
    assert.equal(loop.ok ? 'ok' : loop.failure, 'fuel_exhausted');
    for (const [command, stderr] of [['crash', []], ['abort', ['abort: abort requested by message m-1']]] as const) {
      await deploy(`crasher-${command}`, 'crasher');
      const result = await execute(`crasher-${command}`, incoming(command));
      assert.equal(result.ok ? 'ok' : result.failure, 'trap', command);
      assert.deepEqual(result.stderr, stderr);
    }
  });
});
