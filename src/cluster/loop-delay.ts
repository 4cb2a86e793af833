/**
 * How late this process runs its callbacks: the event-loop delay counts
 * towards Lifeguard's local health. A node whose loop stalls (GC, a busy
 * core) reads its acks late and would otherwise accuse peers of its own
 * slowness.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface LoopDelaySource {
  /** The largest delay (ms) seen since the last call. */
  takeMaxDelayMs(): number;
  close(): void;
}

/** Histogram resolution: fine enough for delays that matter next to a probe timeout of hundreds of ms. */
const RESOLUTION_MS = 10;

export function createEventLoopDelaySource(): LoopDelaySource {
  const histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  return {
    takeMaxDelayMs() {
      // Samples are whole intervals between two ticks; less the resolution, they are the lateness. Node's
      // histogram starts over at `reset`, so a stall in the first tick after a read goes unseen: reads are a probe interval apart.
      const max = histogram.count === 0 ? 0 : Math.max(0, histogram.max / 1e6 - RESOLUTION_MS);
      histogram.reset();
      return max;
    },
    close: () => histogram.disable(),
  };
}

/** For a node whose delays nobody measures (tests of other behaviour). */
export const NO_LOOP_DELAY: LoopDelaySource = { takeMaxDelayMs: () => 0, close: () => {} };
