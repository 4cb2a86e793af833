import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { createFixedRandom } from '../../supervisors/index.js';
import { loadConfig } from '../../src/config/load.js';
import { REDACTED } from '../../src/telemetry/log-redaction.js';
import { ACL_MESSAGE_KEY, createLogger, loggerOptionsFrom } from '../../src/telemetry/logger.js';
import { createTracing } from '../../src/telemetry/tracing.js';
import { captureLog, capturedLogger, memoryTracing, tracingConfig } from './telemetry-fixtures.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

test('JSON lines carry level, msg and message, an RFC 3339 time and the caller\'s fields', () => {
  const { log, capture } = capturedLogger({ level: 'info' });
  log.info({ agent_id: 'a1', from: 'starting', to: 'running' }, 'agent transition');
  log.debug('below the level');
  const lines = capture.text();
  assert.equal(lines.length, 1);
  const record = JSON.parse(lines[0]!) as Record<string, unknown>;
  assert.equal(record.level, 30);
  assert.equal(record.msg, 'agent transition');
  assert.equal(record.message, 'agent transition');
  assert.match(String(record.time), RFC3339);
  assert.equal(record.name, 'svc');
  assert.deepEqual([record.agent_id, record.from, record.to], ['a1', 'starting', 'running']);
  assert.equal(record.trace_id, undefined, 'no trace outside a span');
});

test('lines written inside a span carry its trace id, after awaits too, and span_id when asked', async () => {
  const { tracing } = memoryTracing();
  const off = createTracing(tracingConfig({ enable_tracing: false }), { serviceVersion: '1' });
  for (const t of [tracing, off]) {
    const { log, capture } = capturedLogger({ includeSpanId: true });
    const ids = await t.withSpan('request', {}, async () => {
      log.info('before');
      await tick();
      log.info('after an await');
      log.info({ trace_id: 'given-by-the-caller' }, 'explicit');
      return { trace: t.currentTraceId(), span: t.currentSpanId() };
    });
    const [before, after, explicit] = capture.records();
    assert.equal(before?.trace_id, ids.trace);
    assert.equal(after?.trace_id, ids.trace);
    assert.equal(after?.span_id, ids.span);
    assert.equal(explicit?.trace_id, 'given-by-the-caller');
  }
  const { log, capture } = capturedLogger({ includeTraceId: false });
  tracing.withSpan('quiet', {}, () => log.info('no ids'));
  assert.equal(capture.records()[0]?.trace_id, undefined);
  assert.equal(capture.records()[0]?.span_id, undefined, 'span_id is off by default');
  await Promise.all([tracing.shutdown(), off.shutdown()]);
});

test('debug_sample_rate thins debug and trace lines only', () => {
  const { log, capture } = capturedLogger({ level: 'trace', debugSampleRate: 0.5, random: createFixedRandom(0.1, 0.9) });
  for (let i = 0; i < 4; i++) log.debug({ i }, 'debug');
  for (let i = 0; i < 2; i++) log.trace({ i }, 'trace');
  for (let i = 0; i < 3; i++) log.info({ i }, 'info');
  const by = (msg: string) => capture.records().filter((r) => r.msg === msg).length;
  assert.deepEqual([by('debug'), by('trace'), by('info')], [2, 1, 3]);
});

test('secrets, module bytes and message content never reach the output; content shows on debug lines', () => {
  const { log, capture } = capturedLogger({ level: 'debug' });
  const module = new Uint8Array(4_096);
  const message = { message_id: 'm1', sender: 'client:anonymous', message_type: 'inform', content: 'the secret plan' };
  const fields = {
    token: 'eyJhbGciOi',
    api_key: 'k-123',
    req: { headers: { authorization: 'Bearer abc', 'x-api-key': 'k-456', accept: 'application/json' } },
    user: { password: 'hunter2', name: 'ada' },
    wasm_module: module,
    bytes: Buffer.from('raw'),
    message,
  };
  log.info(fields, 'deploy requested');
  log.debug({ message }, 'delivered');
  const [info, debug] = capture.text();
  for (const secret of ['eyJhbGciOi', 'k-123', 'Bearer abc', 'k-456', 'hunter2', 'the secret plan']) assert.ok(!info!.includes(secret), secret);
  const record = JSON.parse(info!) as Record<string, Record<string, unknown>>;
  assert.equal(record.wasm_module, REDACTED);
  assert.equal(record.bytes, '[3 bytes]');
  assert.equal((record.req?.headers as Record<string, unknown>).accept, 'application/json');
  assert.equal((record.user as Record<string, unknown>).name, 'ada');
  assert.equal(record.message, 'deploy requested' as unknown, '`message` is the text');
  assert.equal(record[ACL_MESSAGE_KEY]?.content, REDACTED);
  assert.equal(record[ACL_MESSAGE_KEY]?.message_id, 'm1');
  assert.ok(debug!.includes('the secret plan'), 'content on a debug line');
  assert.equal(message.content, 'the secret plan', 'the caller\'s object is untouched');
});

test('pretty format: one readable line per record', () => {
  const capture = captureLog();
  const log = createLogger({ level: 'info', format: 'pretty', stream: capture.stream });
  log.warn({ agent_id: 'a1', reason: 'too many restarts', nested: { n: 1 } }, 'agent failed');
  log.error({ err: new Error('boom\nsecond line') }, 'multi\nline');
  const [first, second] = capture.text();
  assert.match(first!, /^\d{4}-\d{2}-\d{2}T[\d:.]+Z WARN {2}agent failed agent_id=a1 reason="too many restarts" nested=\{"n":1\}$/);
  assert.match(second!, /^\S+ ERROR multi\\nline err=\{.*"message":"boom\\nsecond line"/);
  assert.equal(capture.text().length, 2, 'each record one line');
});

test('enable_logging off writes nothing; loggerOptionsFrom maps the observability section', () => {
  const capture = captureLog();
  createLogger({ level: 'info', enabled: false, stream: capture.stream }).fatal('nothing');
  assert.deepEqual(capture.text(), []);

  const cwd = mkdtempSync(join(tmpdir(), 'svc-log-'));
  try {
    const config = loadConfig({ argv: ['--observability.format=pretty', '--observability.include_span_id=true', '--observability.debug_sample_rate=0.25'], env: {}, cwd });
    const options = loggerOptionsFrom(config.observability);
    assert.deepEqual(
      { ...options, stream: undefined },
      { level: 'info', enabled: true, format: 'pretty', includeTraceId: true, includeSpanId: true, debugSampleRate: 0.25, stream: undefined },
    );
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
