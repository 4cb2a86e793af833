/**
 * The OTLP requests svc makes of its span chunks (framed in place) are the
 * requests OpenTelemetry's own protobuf serializer writes for the same
 * spans: both decoded with the full trace schema below and compared.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTraceState, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resources, tracing as sdk } from '@opentelemetry/sdk-node';
import protobuf from 'protobufjs';
import { createRequestFrame, joinRequests } from '../../src/telemetry/otlp-span-encoding.js';
import { ProtoWriter } from '../../src/telemetry/proto-writer.js';
import { readSpans } from '../../src/telemetry/span-record-reader.js';
import { hrTimeToMs, writeReadableSpan } from '../../src/telemetry/span-record.js';

const RESOURCE: Attributes = { 'service.name': 'svc', 'service.version': '1.2.3', 'process.pid': 4242, ratio: 0.5, 'host.name': 'nœud' };
const SCOPE = { name: 'svc', version: '1.2.3' };

/** Spans covering every field: a remote parent with trace state, children, events, links, every attribute type, times to the nanosecond. */
async function sdkSpans(): Promise<sdk.ReadableSpan[]> {
  const exporter = new sdk.InMemorySpanExporter();
  const provider = new sdk.BasicTracerProvider({ resource: resources.resourceFromAttributes(RESOURCE), spanProcessors: [new sdk.SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer(SCOPE.name, SCOPE.version);
  const remote = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
    traceState: createTraceState('vendor=a,other=b'),
    isRemote: true,
  });
  const start: [number, number] = [1_763_700_000, 123_456_789];
  const api = tracer.startSpan(
    'svc.api.deploy_agent',
    {
      kind: SpanKind.SERVER,
      startTime: start,
      attributes: { text: 'ünïcödé \u2028 "quoted"', int: 42, negative: -7, big: 2 ** 40, double: 1.25, yes: true, no: false, words: ['a', 'b'], numbers: [1, 2.5], none: [] },
    },
    remote,
  );
  api.addEvent('checkpoint', { step: 2 }, [1_763_700_000, 200_000_001]);
  api.recordException(new Error('boom'), [1_763_700_000, 300_000_000]);
  api.addLink({ context: { traceId: 'f'.repeat(32), spanId: 'e'.repeat(16), traceFlags: TraceFlags.NONE, isRemote: true }, attributes: { why: 'retry' } });
  api.setStatus({ code: SpanStatusCode.ERROR, message: 'failed: "quoted" \\ and \n newline' });
  const parent = trace.setSpan(ROOT_CONTEXT, api);
  for (const [i, kind] of [SpanKind.PRODUCER, SpanKind.CONSUMER, SpanKind.INTERNAL, SpanKind.CLIENT].entries()) {
    const child = tracer.startSpan(`child-${i}`, { kind, startTime: [1_763_700_001, i], attributes: { 'svc.message.id': `01JD${i}` } }, parent);
    child.setStatus({ code: i === 0 ? SpanStatusCode.OK : SpanStatusCode.UNSET });
    child.end([1_763_700_001, 999_999_999]);
  }
  api.end([1_763_700_002, 5]);
  // Under 128 bytes (its length takes one byte) and over 16 KiB (three bytes): the writer keeps two.
  const root = tracer.startSpan('root', { startTime: [1, 0] });
  root.end([2, 0]);
  const big = tracer.startSpan('big', { startTime: [3, 0], attributes: { blob: 'x'.repeat(20_000), tail: 'y'.repeat(130) } });
  big.end([4, 0]);
  const spans = exporter.getFinishedSpans();
  await provider.shutdown();
  return spans;
}

const f = (type: string, id: number, repeated = false) => (repeated ? { type, id, rule: 'repeated' } : { type, id });

/** opentelemetry-proto's trace request, every field svc writes. */
const TRACE_SCHEMA = protobuf.Root.fromJSON({
  nested: {
    Request: { fields: { resourceSpans: f('ResourceSpans', 1, true) } },
    ResourceSpans: { fields: { resource: f('Resource', 1), scopeSpans: f('ScopeSpans', 2, true), schemaUrl: f('string', 3) } },
    Resource: { fields: { attributes: f('KeyValue', 1, true), droppedAttributesCount: f('uint32', 2) } },
    ScopeSpans: { fields: { scope: f('Scope', 1), spans: f('Span', 2, true), schemaUrl: f('string', 3) } },
    Scope: { fields: { name: f('string', 1), version: f('string', 2), attributes: f('KeyValue', 3, true), droppedAttributesCount: f('uint32', 4) } },
    Span: {
      fields: {
        traceId: f('bytes', 1),
        spanId: f('bytes', 2),
        traceState: f('string', 3),
        parentSpanId: f('bytes', 4),
        name: f('string', 5),
        kind: f('int32', 6),
        startTimeUnixNano: f('fixed64', 7),
        endTimeUnixNano: f('fixed64', 8),
        attributes: f('KeyValue', 9, true),
        droppedAttributesCount: f('uint32', 10),
        events: f('Event', 11, true),
        droppedEventsCount: f('uint32', 12),
        links: f('Link', 13, true),
        droppedLinksCount: f('uint32', 14),
        status: f('Status', 15),
        flags: f('fixed32', 16),
      },
    },
    Event: { fields: { timeUnixNano: f('fixed64', 1), name: f('string', 2), attributes: f('KeyValue', 3, true), droppedAttributesCount: f('uint32', 4) } },
    Link: {
      fields: {
        traceId: f('bytes', 1),
        spanId: f('bytes', 2),
        traceState: f('string', 3),
        attributes: f('KeyValue', 4, true),
        droppedAttributesCount: f('uint32', 5),
        flags: f('fixed32', 6),
      },
    },
    Status: { fields: { message: f('string', 2), code: f('int32', 3) } },
    KeyValue: { fields: { key: f('string', 1), value: f('AnyValue', 2) } },
    AnyValue: {
      oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue'] } },
      fields: { stringValue: f('string', 1), boolValue: f('bool', 2), intValue: f('int64', 3), doubleValue: f('double', 4), arrayValue: f('ArrayValue', 5) },
    },
    ArrayValue: { fields: { values: f('AnyValue', 1, true) } },
  },
}).lookupType('Request');

function decode(bytes: Uint8Array): unknown {
  return TRACE_SCHEMA.toObject(TRACE_SCHEMA.decode(bytes), { longs: String, bytes: String, defaults: true, arrays: true });
}

const FRAME = createRequestFrame({ resourceAttributes: RESOURCE, scope: SCOPE });

/** A chunk of `spans` framed as a request, as the main thread posts it. */
function framedChunk(spans: readonly sdk.ReadableSpan[]): Uint8Array {
  const writer = new ProtoWriter(FRAME.maxBytes + 64);
  writer.pos = FRAME.maxBytes;
  for (const span of spans) writeReadableSpan(writer, span);
  return writer.bytes.subarray(FRAME.write(writer.bytes, FRAME.maxBytes, writer.pos), writer.pos);
}

test('a framed chunk is the request OpenTelemetry ProtobufTraceSerializer writes for the same spans', async () => {
  const spans = await sdkSpans();
  assert.equal(spans.length, 7);
  assert.deepEqual(decode(framedChunk(spans)), decode(ProtobufTraceSerializer.serializeRequest(spans)!));
});

test('joined requests are one request with each chunk as a resource_spans entry, spans in order', async () => {
  const spans = await sdkSpans();
  const parts = [spans.slice(0, 2), spans.slice(2)];
  const joined = decode(joinRequests(parts.map(framedChunk))) as { resourceSpans: unknown[] };
  const expected = parts.map((part) => (decode(ProtobufTraceSerializer.serializeRequest(part)!) as { resourceSpans: unknown[] }).resourceSpans[0]);
  assert.deepEqual(joined.resourceSpans, expected);
  const single = framedChunk(spans);
  assert.equal(joinRequests([single]), single, 'a single chunk is sent as it is, not copied');
});

test('an empty chunk frames as a valid request with no spans', () => {
  const empty = framedChunk([]);
  const decoded = decode(empty) as { resourceSpans: { scopeSpans: { spans: unknown[]; scope: { name: string } }[] }[] };
  assert.deepEqual(decoded.resourceSpans[0]?.scopeSpans[0]?.spans, []);
  assert.equal(decoded.resourceSpans[0]?.scopeSpans[0]?.scope.name, 'svc');
});

test('framing refuses a chunk without room in front of its spans', () => {
  assert.throws(() => FRAME.write(new Uint8Array(64), 4, 10), /needs \d+ bytes more in front of the spans/);
});

test('a chunk reads back into the spans that were written, to the nanosecond', async () => {
  const spans = await sdkSpans();
  const writer = new ProtoWriter(16);
  for (const span of spans) writeReadableSpan(writer, span);
  const resource = resources.resourceFromAttributes(RESOURCE);
  const back = readSpans(writer.finish(), resource, SCOPE);
  assert.equal(back.length, spans.length);
  for (const [i, copy] of back.entries()) {
    const original = spans[i]!;
    assert.equal(copy.name, original.name);
    assert.equal(copy.kind, original.kind);
    assert.deepEqual(copy.spanContext().traceId, original.spanContext().traceId);
    assert.equal(copy.spanContext().spanId, original.spanContext().spanId);
    assert.equal(copy.spanContext().traceState?.serialize(), original.spanContext().traceState?.serialize());
    assert.equal(copy.parentSpanContext?.spanId, original.parentSpanContext?.spanId);
    assert.deepEqual(copy.startTime, original.startTime);
    assert.deepEqual(copy.endTime, original.endTime);
    assert.deepEqual(copy.attributes, original.attributes);
    assert.deepEqual(copy.status, original.status.message === undefined ? { code: original.status.code } : original.status);
    assert.deepEqual(copy.events.map((e) => [e.name, e.time, e.attributes]), original.events.map((e) => [e.name, e.time, e.attributes]));
    assert.deepEqual(copy.links.map((l) => [l.context.spanId, l.attributes]), original.links.map((l) => [l.context.spanId, l.attributes]));
    assert.equal(copy.resource, resource);
  }
  for (const [i, copy] of back.entries()) assert.equal(copy.parentSpanContext?.isRemote === true, spans[i]!.parentSpanContext?.isRemote === true);
  assert.equal(back.find((s) => s.name === 'svc.api.deploy_agent')?.parentSpanContext?.isRemote, true, 'a remote parent stays remote');
  assert.ok(Math.abs(hrTimeToMs(back[0]!.startTime) - hrTimeToMs(spans[0]!.startTime)) < 1e-6);
});

test('a damaged chunk is refused, not read as a wrong span', async () => {
  const writer = new ProtoWriter(16);
  for (const span of await sdkSpans()) writeReadableSpan(writer, span);
  const bytes = writer.finish();
  const resource = resources.resourceFromAttributes({});
  assert.throws(() => readSpans(bytes.subarray(0, bytes.length - 3), resource, SCOPE), /ends inside a span/);
  assert.throws(() => readSpans(Uint8Array.of(0x08, 0x01), resource, SCOPE), /unexpected field key/);
});
