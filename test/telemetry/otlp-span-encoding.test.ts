/**
 * The OTLP requests written straight from span batches are the requests
 * OpenTelemetry's own serializers write for the same spans: JSON compared
 * parsed, protobuf compared decoded with the full trace schema below.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind, SpanStatusCode, TraceFlags, type Attributes } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resources } from '@opentelemetry/sdk-node';
import protobuf from 'protobufjs';
import { encodeJson, encodeProtobuf, type SpanBatches } from '../../src/telemetry/otlp-span-encoding.js';
import { readSpans, writeAttributes, writeEventsAndLinks, writeHead, type SpanBatch } from '../../src/telemetry/span-record.js';

const RESOURCE: Attributes = { 'service.name': 'svc', 'service.version': '1.2.3', 'process.pid': 4242, ratio: 0.5 };
const SCOPE = { name: 'svc', version: '1.2.3' };

/** Spans covering every field: roots and children, remote parents, trace state, events, links, every attribute type. */
function batches(): SpanBatch[] {
  const first: SpanBatch = [];
  writeHead(first, {
    name: 'svc.api.deploy_agent',
    kind: SpanKind.SERVER,
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
    traceState: 'vendor=a,other=b',
    parentSpanId: '',
    parentIsRemote: false,
    startMs: 1_763_700_000_123.456,
    endMs: 1_763_700_000_125.5,
    statusCode: SpanStatusCode.ERROR,
    statusMessage: 'failed: "quoted" \\ and \n newline',
  });
  writeAttributes(first, { text: 'ünïcödé \u2028', int: 42, negative: -7, big: 2 ** 40, double: 1.25, yes: true, no: false, words: ['a', 'b'], numbers: [1, 2.5], none: [] }, 3);
  writeEventsAndLinks(
    first,
    [{ name: 'exception', timeMs: 1_763_700_000_124.001, attributes: { 'exception.message': 'boom' }, droppedAttributesCount: 1 }],
    [{ context: { traceId: 'f'.repeat(32), spanId: 'e'.repeat(16), traceFlags: TraceFlags.NONE, isRemote: true }, attributes: { why: 'retry' } }],
    2,
    1,
  );
  const second: SpanBatch = [];
  for (let i = 0; i < 3; i++) {
    writeHead(second, {
      name: i === 0 ? 'svc.messages.send' : 'svc.agent.execute',
      kind: i === 0 ? SpanKind.PRODUCER : SpanKind.CONSUMER,
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: `00000000000000a${i}`,
      traceFlags: TraceFlags.SAMPLED,
      traceState: '',
      parentSpanId: i === 0 ? 'b7ad6b7169203331' : `00000000000000a${i - 1}`,
      parentIsRemote: i === 0,
      startMs: 1_763_700_000_200 + i,
      endMs: 1_763_700_000_200.000_5 + i,
      statusCode: SpanStatusCode.UNSET,
      statusMessage: '',
    });
    writeAttributes(second, { 'svc.message.id': `01JD${i}`, 'svc.execution.fuel_used': 1234 * i });
    writeEventsAndLinks(second, [], []);
  }
  return [first, second];
}

function request(): SpanBatches {
  const list = batches();
  return { batches: list, spans: 4 };
}

function libraryInput() {
  const resource = resources.resourceFromAttributes(RESOURCE);
  return batches().flatMap((batch) => readSpans(batch, resource, SCOPE));
}

test('JSON: the same request as OpenTelemetry JsonTraceSerializer writes', () => {
  const ours = JSON.parse(Buffer.from(encodeJson(request(), { resourceAttributes: RESOURCE, scope: SCOPE })).toString('utf8')) as unknown;
  const theirs = JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(libraryInput())!).toString('utf8')) as unknown;
  assert.deepEqual(ours, theirs);
});

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

test('protobuf: the same request as OpenTelemetry ProtobufTraceSerializer writes', () => {
  const ours = decode(encodeProtobuf(request(), { resourceAttributes: RESOURCE, scope: SCOPE }));
  const theirs = decode(ProtobufTraceSerializer.serializeRequest(libraryInput())!);
  assert.deepEqual(ours, theirs);
});

test('an empty request is a valid request with no spans', () => {
  const empty = { batches: [], spans: 0 };
  const json = JSON.parse(Buffer.from(encodeJson(empty, { resourceAttributes: RESOURCE, scope: SCOPE })).toString('utf8')) as { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] };
  assert.deepEqual(json.resourceSpans[0]?.scopeSpans[0]?.spans, []);
  const decoded = decode(encodeProtobuf(empty, { resourceAttributes: RESOURCE, scope: SCOPE })) as { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] };
  assert.deepEqual(decoded.resourceSpans[0]?.scopeSpans[0]?.spans, []);
});
