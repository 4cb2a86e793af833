import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANONYMOUS_PRINCIPAL } from '../../../src/api/api-call.js';
import { callContextFrom, deadlineMillis } from '../../../src/api/grpc/grpc-call-context.js';
import { isTraceId } from '../../../src/telemetry/trace-ids.js';
import { memoryTracing } from '../../telemetry/telemetry-fixtures.js';

describe('callContextFrom', () => {
  const now = 1_000_000;
  const cases: Array<[string, Date | number, number | undefined, number]> = [
    ['no client deadline, no server timeout (a stream)', Infinity, undefined, Infinity],
    ['the server timeout alone', Infinity, 60_000, now + 60_000],
    ['the client deadline when earlier', new Date(now + 500), 60_000, now + 500],
    ['the server timeout when earlier', now + 120_000, 60_000, now + 60_000],
  ];
  for (const [name, deadline, timeoutMs, expected] of cases) {
    it(name, () => {
      const ctx = callContextFrom({ deadline, timeoutMs, now });
      assert.equal(ctx.deadline, expected);
      assert.equal(ctx.principal, ANONYMOUS_PRINCIPAL);
      assert.ok(isTraceId(ctx.trace_id));
    });
  }

  it('names the trace of the active span: the call span the interceptor made active', () => {
    const { tracing } = memoryTracing();
    tracing.withSpan('svc.test', {}, (span) => {
      assert.equal(callContextFrom({ deadline: Infinity }).trace_id, span.spanContext().traceId);
    });
  });

  it('reads Date and number deadlines alike', () => {
    assert.equal(deadlineMillis(new Date(1234)), 1234);
    assert.equal(deadlineMillis(1234), 1234);
    assert.equal(deadlineMillis(Infinity), Infinity);
  });
});
