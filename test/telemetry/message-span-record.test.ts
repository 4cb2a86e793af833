/**
 * The message path's one-pass span writer writes exactly the bytes of the
 * general writer (`writeSpan`, itself checked against OpenTelemetry's
 * serializer in otlp-span-encoding.test.ts), and declines, writing nothing,
 * every span of another shape.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind, SpanStatusCode, TraceFlags, type AttributeValue } from '@opentelemetry/api';
import { resources } from '@opentelemetry/sdk-node';
import { LightSpan, type SpanChunkSink } from '../../src/telemetry/light-span.js';
import { KEPT_VALUES_PER_KEY, keptValueCount, REPEATING_ATTRIBUTES, writeMessagePathSpan, type MessagePathSpan } from '../../src/telemetry/message-span-record.js';
import { ProtoWriter } from '../../src/telemetry/proto-writer.js';
import { readSpans } from '../../src/telemetry/span-record-reader.js';
import { writeSpan, type SpanHead } from '../../src/telemetry/span-record.js';
import { hex8 } from '../../src/telemetry/trace-ids.js';

const UUID = '0193a6f2-7c1e-7d3a-9b4e-2f6c8d1e5a70';

function head(overrides: Partial<SpanHead> = {}): SpanHead {
  return {
    name: 'svc.messages.send',
    kind: SpanKind.PRODUCER,
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
    traceState: '',
    parentSpanId: '00f067aa0ba902b7',
    parentIsRemote: false,
    startTime: 1_763_700_000_123 + 0.456789,
    endTime: 1_763_700_000_125 + 0.000001,
    statusCode: SpanStatusCode.UNSET,
    statusMessage: '',
    ...overrides,
  };
}

const SEND: AttributeValue[] = [
  'svc.message.id', UUID,
  'svc.message.type', 'inform',
  'svc.message.sender', UUID.replace('0193', 'aaaa'),
  'svc.message.receiver', UUID.replace('0193', 'bbbb'),
  'svc.message.conversation_id', UUID.replace('0193', 'cccc'),
];

const EXECUTE: AttributeValue[] = [
  'svc.agent.id', UUID,
  'svc.message.id', UUID,
  'svc.message.type', 'request',
  'svc.execution.status', 'success',
  'svc.execution.fuel_used', 0,
];

function generalBytes(span: SpanHead, attributes: AttributeValue[]): Buffer {
  const w = new ProtoWriter(64);
  writeSpan(w, span, attributes);
  return Buffer.from(w.bytes.subarray(0, w.pos));
}

/** `span` with its ids also held as bytes, as a light span holds them: in one block, at offsets other than 0. */
function withIdBytes(span: SpanHead): MessagePathSpan {
  const block = new Uint8Array(40);
  block.set(Buffer.from(span.traceId, 'hex'), 3);
  block.set(Buffer.from(span.spanId, 'hex'), 19);
  block.set(Buffer.from(span.parentSpanId, 'hex'), 31);
  return { ...span, traceBlock: block, traceAt: 3, idBlock: block, idAt: 19, parentBlock: block, parentAt: 31 };
}

/** The fast writer's bytes, after some bytes already in the chunk; undefined when it declined (and then nothing moved). */
function fastBytes(span: SpanHead, attributes: AttributeValue[]): Buffer | undefined {
  const w = new ProtoWriter(16);
  w.stringField(1, 'before');
  const before = w.pos;
  if (!writeMessagePathSpan(w, withIdBytes(span), attributes)) {
    assert.equal(w.pos, before, 'a declined span leaves the chunk as it was');
    return undefined;
  }
  return Buffer.from(w.bytes.subarray(before, w.pos));
}

test('writes the bytes of the general writer for the message path spans', () => {
  const cases: Array<[string, SpanHead, AttributeValue[]]> = [
    ['send', head(), SEND],
    ['execute', head({ name: 'svc.agent.execute', kind: SpanKind.CONSUMER }), EXECUTE],
    ['large fuel', head(), [...EXECUTE.slice(0, -1), Number.MAX_SAFE_INTEGER]],
    ['fuel of one byte and two', head(), [...SEND, 'a', 127, 'b', 128, 'c', 300]],
    ['unsampled flags and a remote parent', head({ traceFlags: TraceFlags.NONE, parentIsRemote: true }), SEND],
    ['a pair of 127 bytes', head(), ['k', 'v'.repeat(127 - 7)]],
    ['whole milliseconds and a time at the epoch', head({ startTime: 0, endTime: 1_763_700_000_000 }), SEND],
    ['a time just under the next second', head({ startTime: 1_763_700_000_999 + 0.9999999, endTime: 1_763_700_001_000 }), SEND],
    ['empty strings', head(), [...SEND, '', '', 'x', '']],
    ['strings between integers', head(), ['a', 1, ...SEND, 'b', 2, 'k', 'v']],
    ['a kept pair of 127 bytes', head(), ['svc.message.sender', 's'.repeat(127 - 6 - 18)]],
    ['a repeating key with an integer', head(), ['svc.message.sender', 7, 'svc.agent.id', 'a']],
  ];
  for (const [name, span, attributes] of cases) {
    const fast = fastBytes(span, attributes);
    assert.ok(fast !== undefined, `${name}: written`);
    assert.deepEqual(fast, generalBytes(span, attributes), name);
  }
});

test('declines spans of any other shape, writing nothing', () => {
  const cases: Array<[string, SpanHead, AttributeValue[]]> = [
    ['non-ASCII value', head(), ['svc.agent.id', 'agënt']],
    ['non-ASCII key', head(), ['clé', 'v']],
    ['non-ASCII value after ASCII ones', head(), [...SEND, 'svc.agent.id', 'agënt']],
    ['non-ASCII value after an integer', head(), [...SEND, 'n', 1, 'k', 'vé']],
    ['a character beyond Latin-1', head(), [...SEND, 'k', 'v€']],
    ['a lone surrogate', head(), [...SEND, 'k', 'v\ud800']],
    ['a pair of 128 bytes', head(), ['k', 'v'.repeat(128 - 7)]],
    ['a kept pair of 128 bytes', head(), ['svc.message.sender', 's'.repeat(128 - 6 - 18)]],
    ['a non-ASCII value of a repeating key, after its ASCII values', head(), [...SEND, 'svc.message.sender', 'agënt']],
    ['negative number', head(), ['n', -1]],
    ['fraction', head(), ['n', 1.5]],
    ['unsafe integer', head(), ['n', 2 ** 60]],
    ['boolean', head(), ['b', true]],
    ['array', head(), ['a', ['x']]],
    ['trace state', head({ traceState: 'vendor=a' }), SEND],
    ['error status', head({ statusCode: SpanStatusCode.ERROR, statusMessage: 'trap: unreachable' }), SEND],
    ['status message alone', head({ statusMessage: 'note' }), SEND],
    ['hrtime times', head({ startTime: [1_763_700_000, 5], endTime: [1_763_700_001, 5] }), SEND],
    ['long name', head({ name: 'n'.repeat(128) }), SEND],
    ['non-ASCII name', head({ name: 'svc.messages.sënd' }), SEND],
    ['body under 128 bytes', head(), []],
    ['body over 16,383 bytes', head(), Array.from({ length: 300 }, (_, i) => [`key.${i}`, 'v'.repeat(90)]).flat()],
  ];
  for (const [name, span, attributes] of cases) assert.equal(fastBytes(span, attributes), undefined, name);
});

test('kept attribute fields: the same bytes at first use and after, and the tables stay bounded', () => {
  // Every repeating key with a value used once, then again: the second write copies what the first kept.
  const repeating = REPEATING_ATTRIBUTES.flatMap((key, i) => [key, `value-${i}`]);
  const first = fastBytes(head(), repeating);
  assert.deepEqual(first, generalBytes(head(), repeating));
  assert.deepEqual(fastBytes(head(), repeating), first);
  // More distinct values than a table keeps, twice over: every span is still right, and the tables are emptied when full.
  for (let i = 0; i < 2 * KEPT_VALUES_PER_KEY + 10; i++) {
    const attributes = ['svc.message.sender', `agent-${i}`, 'svc.message.receiver', `agent-${i + 1}`];
    if (i % 1000 === 0) assert.deepEqual(fastBytes(head(), attributes), generalBytes(head(), attributes), `span ${i}`);
    else assert.ok(fastBytes(head(), attributes) !== undefined);
    const kept = keptValueCount('svc.message.sender');
    assert.ok(kept >= 1 && kept <= KEPT_VALUES_PER_KEY, `${kept} senders kept`);
  }
  assert.equal(keptValueCount('svc.message.id'), 0, "a message's own id is never kept");
  const attributes = ['svc.message.sender', 'agent-1', 'svc.message.receiver', 'agent-2'];
  assert.deepEqual(fastBytes(head(), attributes), generalBytes(head(), attributes), 'a value kept before the tables were emptied');
});

test('a light span takes the one-pass writer when it can, the general one for an event', () => {
  const sink: SpanChunkSink = { open: () => undefined, commit: () => undefined, defer: () => undefined };
  const parent = { traceId: head().traceId, spanId: head().parentSpanId, traceFlags: TraceFlags.SAMPLED, traceState: '' };
  const plain = new LightSpan(sink, 'svc.messages.send', SpanKind.PRODUCER, parent, [...SEND]);
  plain.end();
  const viaSpan = new ProtoWriter(64);
  plain.writeTo(viaSpan);
  assert.deepEqual(Buffer.from(viaSpan.bytes.subarray(0, viaSpan.pos)), generalBytes(plain, SEND));

  const failed = new LightSpan(sink, 'svc.agent.execute', SpanKind.CONSUMER, parent, [...EXECUTE]);
  failed.recordException(new Error('boom'));
  failed.end();
  const chunk = new ProtoWriter(64);
  failed.writeTo(chunk);
  const [read] = [...readSpans(chunk.bytes.subarray(0, chunk.pos), resources.resourceFromAttributes({}), { name: 'svc' })];
  assert.equal(read?.name, 'svc.agent.execute');
  assert.deepEqual(read?.events.map((event) => [event.name, event.attributes?.['exception.message']]), [['exception', 'boom']]);
  assert.equal(read?.attributes['svc.agent.id'], UUID);
});

test('a light span keeps its ids as bytes and spells them in hex when asked', () => {
  const sink: SpanChunkSink = { open: () => undefined, commit: () => undefined, defer: () => undefined };
  const written = (span: LightSpan): Buffer => {
    const w = new ProtoWriter(64);
    span.writeTo(w);
    return Buffer.from(w.bytes.subarray(0, w.pos));
  };
  const parent = { traceId: head().traceId, spanId: head().parentSpanId, traceFlags: TraceFlags.SAMPLED, traceState: '' };
  const child = new LightSpan(sink, 'svc.agent.execute', SpanKind.CONSUMER, parent, [...EXECUTE]);
  const grandchild = new LightSpan(sink, 'svc.messages.send', SpanKind.PRODUCER, child, [...SEND]);
  for (const span of [child, grandchild]) span.end();
  assert.equal(child.traceId, parent.traceId);
  assert.equal(child.parentSpanId, parent.spanId);
  assert.match(child.spanId, /^[0-9a-f]{16}$/);
  assert.equal(grandchild.parentSpanId, child.spanId);
  assert.equal(grandchild.traceparent(), `00-${parent.traceId}-${grandchild.spanId}-01`);
  // A conversation's spans share one copy of the trace id; a child reads its parent's id where the parent keeps it.
  assert.equal(grandchild.traceBlock, child.traceBlock);
  assert.equal(grandchild.parentBlock, child.idBlock);
  assert.deepEqual(written(child), generalBytes(child, EXECUTE));
  assert.deepEqual(written(grandchild), generalBytes(grandchild, SEND));

  // Uppercase hex from elsewhere is read as the general writer reads it; ids that are not hex of the right length
  // are left to the general writer, as given.
  for (const odd of [{ ...parent, traceId: parent.traceId.toUpperCase() }, { ...parent, spanId: 'b7ad' }, { ...parent, traceId: `${parent.traceId.slice(0, 31)}g` }]) {
    const span = new LightSpan(sink, 'svc.messages.send', SpanKind.PRODUCER, odd, [...SEND]);
    span.end();
    assert.deepEqual(written(span), generalBytes(span, SEND), JSON.stringify(odd));
  }
});

test('light spans take distinct ids, none all zeros, across blocks of ids', () => {
  const sink: SpanChunkSink = { open: () => undefined, commit: () => undefined, defer: () => undefined };
  const parent = { traceId: head().traceId, spanId: head().parentSpanId, traceFlags: TraceFlags.SAMPLED, traceState: '' };
  const spans = Array.from({ length: 2_000 }, () => new LightSpan(sink, 'svc.messages.send', SpanKind.PRODUCER, parent, []));
  const first = spans[0]!.spanId;
  const ids = new Set(spans.map((span) => span.spanId));
  assert.equal(ids.size, spans.length);
  assert.ok(!ids.has('0'.repeat(16)));
  // A block is never rewritten: the first span's id reads the same after three more blocks were made.
  assert.equal(hex8(spans[0]!.idBlock, spans[0]!.idAt), first);
  assert.ok(new Set(spans.map((span) => span.idBlock)).size >= 4);
});
