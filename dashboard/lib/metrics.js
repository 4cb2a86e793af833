/**
 * The charts' figures from successive polls of `GET /api/v1/metrics`: rates
 * of the `svc_*` counters between two polls, latency quantiles from the
 * histograms' bucket increases (as Prometheus's `rate` and
 * `histogram_quantile` compute them), and the memory gauges. A counter that
 * went down was reset (the server restarted): its increase is its new value.
 */
/** @typedef {import('./types.js').MetricSample} MetricSample */

/** The figures of one interval between polls; null where the interval has nothing to say (no message handled: no latency). */
/**
 * @typedef {object} Point
 * @property {number} t seconds since the epoch, at the later poll
 * @property {number} sent messages accepted per second
 * @property {number} received messages handled per second
 * @property {number} executions successful executions per second
 * @property {number} executionErrors failed executions per second
 * @property {number} messageErrors messages not delivered or handled, per second
 * @property {number | null} restarts agent restarts per second, where the server counts them
 * @property {number | null} latencyMean mean time from acceptance to handled, ms
 * @property {number | null} latencyP95 its 95th percentile, ms
 * @property {number | null} executionP95 95th percentile of one execution, ms
 * @property {number} processMemory resident memory of the server, bytes
 * @property {number} agentMemory linear memory of all agents, bytes
 */

export const METRIC = {
  sent: 'svc_messages_sent_total',
  received: 'svc_messages_received_total',
  executions: 'svc_agent_executions_total',
  messageErrors: 'svc_message_errors_total',
  restarts: 'svc_agent_restarts_total',
  processing: 'svc_message_processing_duration_seconds',
  execution: 'svc_agent_execution_duration_seconds',
  processMemory: 'svc_runtime_memory_usage_bytes',
  agentMemory: 'svc_wasm_memory_usage_bytes',
  throttled: 'svc_agent_throttled_seconds_total',
};

/** Samples kept: at one poll every 2 s, ten minutes. */
export const HISTORY_POINTS = 300;

/**
 * @param {MetricSample[]} samples
 * @param {string} name
 * @param {Record<string, string>} [labels] only samples carrying these
 */
export function sumOf(samples, name, labels = {}) {
  let total = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(labels).some(([k, v]) => s.labels?.[k] !== v)) continue;
    total += s.value;
  }
  return total;
}

/**
 * @param {MetricSample[]} samples
 * @param {string} name
 */
function has(samples, name) {
  return samples.some((s) => s.name === name);
}

/**
 * Increase of a counter, a reset counted from zero.
 * @param {number} before
 * @param {number} after
 */
export function increase(before, after) {
  return after >= before ? after - before : after;
}

/**
 * The cumulative buckets of a histogram (`le` → count), summed over its other labels, by ascending bound.
 * @param {MetricSample[]} samples
 * @param {string} name the histogram's base name
 * @returns {Array<[number, number]>}
 */
export function bucketsOf(samples, name) {
  /** @type {Map<number, number>} */
  const buckets = new Map();
  for (const s of samples) {
    if (s.name !== `${name}_bucket`) continue;
    const le = s.labels?.le === '+Inf' ? Infinity : Number(s.labels?.le);
    if (Number.isNaN(le)) continue;
    buckets.set(le, (buckets.get(le) ?? 0) + s.value);
  }
  return [...buckets].sort((a, b) => a[0] - b[0]);
}

/**
 * `histogram_quantile`: the q-quantile of cumulative buckets, interpolated
 * linearly inside its bucket; the highest finite bound when it falls in +Inf;
 * null without observations.
 * @param {number} q 0..1
 * @param {Array<[number, number]>} buckets cumulative, ascending, the last +Inf
 * @returns {number | null}
 */
export function quantile(q, buckets) {
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [bound, count] of buckets) {
    if (count >= rank) {
      if (bound === Infinity) return lower;
      // The first bucket's lower edge is 0, as Prometheus assumes for positive observations.
      return count === below ? bound : lower + ((bound - lower) * (rank - below)) / (count - below);
    }
    lower = bound;
    below = count;
  }
  return lower;
}

/**
 * Increase of each bucket between two polls (a reset counted from zero).
 * @param {Array<[number, number]>} before
 * @param {Array<[number, number]>} after
 * @returns {Array<[number, number]>}
 */
export function bucketIncrease(before, after) {
  const previous = new Map(before);
  const reset = after.some(([le, count]) => count < (previous.get(le) ?? 0));
  return after.map(([le, count]) => [le, reset ? count : count - (previous.get(le) ?? 0)]);
}

/**
 * @param {MetricSample[]} before
 * @param {MetricSample[]} after
 * @param {number} seconds between the polls, > 0
 * @param {number} t when the later poll was taken, seconds
 * @returns {Point}
 */
export function pointBetween(before, after, seconds, t) {
  /** @param {string} name @param {Record<string, string>} [labels] */
  const rate = (name, labels) => increase(sumOf(before, name, labels), sumOf(after, name, labels)) / seconds;
  const processingCount = increase(sumOf(before, `${METRIC.processing}_count`), sumOf(after, `${METRIC.processing}_count`));
  const processingSum = increase(sumOf(before, `${METRIC.processing}_sum`), sumOf(after, `${METRIC.processing}_sum`));
  const ms = (/** @type {number | null} */ s) => (s === null ? null : s * 1000);
  return {
    t,
    sent: rate(METRIC.sent),
    received: rate(METRIC.received),
    executions: rate(METRIC.executions, { status: 'success' }),
    executionErrors: rate(METRIC.executions, { status: 'error' }),
    messageErrors: rate(METRIC.messageErrors),
    restarts: has(after, METRIC.restarts) ? rate(METRIC.restarts) : null,
    latencyMean: processingCount > 0 ? (processingSum / processingCount) * 1000 : null,
    latencyP95: ms(quantile(0.95, bucketIncrease(bucketsOf(before, METRIC.processing), bucketsOf(after, METRIC.processing)))),
    executionP95: ms(quantile(0.95, bucketIncrease(bucketsOf(before, METRIC.execution), bucketsOf(after, METRIC.execution)))),
    processMemory: sumOf(after, METRIC.processMemory),
    agentMemory: sumOf(after, METRIC.agentMemory),
  };
}

/**
 * Seconds each agent was held back by its CPU quota, where the server counts it.
 * @param {MetricSample[]} samples
 * @returns {Map<string, number>}
 */
export function throttledByAgent(samples) {
  /** @type {Map<string, number>} */
  const seconds = new Map();
  for (const s of samples) {
    const id = s.labels?.agent_id;
    if (s.name === METRIC.throttled && id !== undefined) seconds.set(id, (seconds.get(id) ?? 0) + s.value);
  }
  return seconds;
}

/**
 * The last polls as points, oldest first.
 * @param {number} [capacity]
 */
export function createMetricHistory(capacity = HISTORY_POINTS) {
  /** @type {Point[]} */
  const points = [];
  /** @type {{ samples: MetricSample[], t: number } | undefined} */
  let last;
  return {
    /**
     * @param {MetricSample[]} samples
     * @param {number} t seconds since the epoch
     */
    push(samples, t) {
      if (last !== undefined && t > last.t) {
        points.push(pointBetween(last.samples, samples, t - last.t, t));
        if (points.length > capacity) points.splice(0, points.length - capacity);
      }
      last = { samples, t };
    },
    /** @returns {readonly Point[]} */
    points: () => points,
    /** @returns {MetricSample[]} the latest poll's samples */
    latest: () => last?.samples ?? [],
  };
}

/** @typedef {ReturnType<typeof createMetricHistory>} MetricHistory */
