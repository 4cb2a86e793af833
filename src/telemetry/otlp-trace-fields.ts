/**
 * The field numbers of the OTLP trace messages svc writes and reads back, as
 * opentelemetry-proto defines them (`opentelemetry/proto/trace/v1/trace.proto`,
 * `common/v1/common.proto`), and the OTLP span flags.
 */

/** `ScopeSpans.spans`: the field every span of a chunk is written as. */
export const SCOPE_SPANS_SPAN_FIELD = 2;

/** Span fields. */
export const SPAN = {
  traceId: 1,
  spanId: 2,
  traceState: 3,
  parentSpanId: 4,
  name: 5,
  kind: 6,
  start: 7,
  end: 8,
  attributes: 9,
  droppedAttributes: 10,
  events: 11,
  droppedEvents: 12,
  links: 13,
  droppedLinks: 14,
  status: 15,
  flags: 16,
} as const;
export const EVENT = { time: 1, name: 2, attributes: 3, droppedAttributes: 4 } as const;
export const LINK = { traceId: 1, spanId: 2, traceState: 3, attributes: 4, droppedAttributes: 5, flags: 6 } as const;
export const STATUS = { message: 2, code: 3 } as const;
export const ANY = { string: 1, bool: 2, int: 3, double: 4, array: 5 } as const;

// OTLP span flags: the W3C trace flags in the low byte, then whether the parent's remoteness is known and whether it was remote.
const FLAGS_HAS_IS_REMOTE = 0x100;
export const FLAGS_IS_REMOTE = 0x200;

export function spanFlags(traceFlags: number, isRemote: boolean): number {
  return (traceFlags & 0xff) | FLAGS_HAS_IS_REMOTE | (isRemote ? FLAGS_IS_REMOTE : 0);
}
