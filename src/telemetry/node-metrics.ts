/**
 * Node's process metrics (prom-client's defaults, `process_*` and
 * `nodejs_*`) on a registry, once: the registry `/metrics` serves and the
 * one the `svc_*` metrics live on are usually the same, and collecting the
 * defaults twice on one registry throws.
 */
import { collectDefaultMetrics, type Registry } from 'prom-client';

/**
 * prom-client defaults that are gauges although their names end in `_total`:
 * `promtool check metrics` refuses them, and their unsuffixed twins
 * (`nodejs_active_handles{type}`, ...) carry the same figures by type.
 */
export const NODE_GAUGES_NAMED_TOTAL = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'] as const;
/** One default metric, to tell whether the registry already collects the defaults. */
const NODE_METRIC_PROBE = 'process_cpu_user_seconds_total';

/** Registers Node's process metrics on `registry` unless it has them already. */
export function registerNodeMetrics(registry: Registry): void {
  if (registry.getSingleMetric(NODE_METRIC_PROBE) !== undefined) return;
  collectDefaultMetrics({ register: registry });
  for (const name of NODE_GAUGES_NAMED_TOTAL) registry.removeSingleMetric(name);
}
