/**
 * Which traces are recorded. Every span continues the decision of its
 * parent (OpenTelemetry's `ParentBased`), so a trace is kept or dropped
 * whole, across agents and nodes. A span that starts a trace is sampled at
 * a rate that depends on what starts it: an API call at
 * `trace_sample_rate`, an agent message at `message_trace_sample_rate`,
 * which lets the heavy message traffic be sampled below the calls.
 */
import { ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-base';
import type { Config } from '../config/schema.js';
import { SPANS } from './span-names.js';

export type SamplingConfig = Pick<Config['observability'], 'trace_sample_rate' | 'message_trace_sample_rate'>;

/** The spans of the message path; every other span is sampled as the API calls are. */
const MESSAGE_PATH_SPANS: ReadonlySet<string> = new Set([SPANS.messagesSend, SPANS.agentExecute]);

export function createTraceSampler(config: SamplingConfig): Sampler {
  const calls = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.trace_sample_rate) });
  const messages = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.message_trace_sample_rate) });
  return {
    shouldSample: (parent, traceId, name, kind, attributes, links) =>
      (MESSAGE_PATH_SPANS.has(name) ? messages : calls).shouldSample(parent, traceId, name, kind, attributes, links),
    toString: () => `SvcSampler{calls=${calls.toString()}, messages=${messages.toString()}}`,
  };
}
