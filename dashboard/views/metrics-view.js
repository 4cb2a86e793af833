/** Live charts of the server's figures, from `GET /api/v1/metrics` polled (lib/metrics.js). */
import { html } from 'htm/preact';
import { formatBytes, formatNumber } from '../lib/format.js';
import { Chart } from './chart.js';
import { ErrorNote } from './error-note.js';

/** @typedef {import('../lib/hub.js').Hub} Hub */
/** @typedef {import('../lib/metrics.js').Point} Point */

const COLORS = ['#2563eb', '#16a34a', '#dc2626', '#d97706', '#7c3aed'];

/**
 * @param {readonly Point[]} points
 * @param {Array<(p: Point) => number | null>} fields
 * @returns {import('uplot').AlignedData}
 */
function columns(points, fields) {
  return [points.map((p) => p.t), ...fields.map((read) => points.map(read))];
}

const perSecond = (/** @type {number} */ v) => `${formatNumber(v)}/s`;
const millis = (/** @type {number} */ v) => `${formatNumber(v)} ms`;

/** @param {{ hub: Hub }} props */
export function MetricsView({ hub }) {
  const points = hub.metrics.points();
  const restarts = points.some((p) => p.restarts !== null);
  return html`<div class="view" data-view="metrics">
    <${ErrorNote} error=${hub.state.metricsError} />
    ${points.length === 0 ? html`<p class="muted">Collecting: the charts start after two polls of the metrics.</p>` : null}
    <div class="charts">
      <${Chart} id="chart-messages" title="Messages" unit=${perSecond}
        series=${[{ label: 'sent', stroke: COLORS[0] }, { label: 'handled', stroke: COLORS[1] }]}
        data=${columns(points, [(p) => p.sent, (p) => p.received])} />
      <${Chart} id="chart-executions" title="Executions" unit=${perSecond}
        series=${[{ label: 'succeeded', stroke: COLORS[1] }]}
        data=${columns(points, [(p) => p.executions])} />
      <${Chart} id="chart-errors" title="Errors" unit=${perSecond}
        series=${[{ label: 'failed executions', stroke: COLORS[2] }, { label: 'undelivered messages', stroke: COLORS[3], dash: [6, 4] }, ...(restarts ? [{ label: 'restarts', stroke: COLORS[4] }] : [])]}
        data=${columns(points, [(p) => p.executionErrors, (p) => p.messageErrors, ...(restarts ? [(/** @type {Point} */ p) => p.restarts] : [])])} />
      <${Chart} id="chart-latency" title="Latency" unit=${millis}
        series=${[{ label: 'message mean', stroke: COLORS[0] }, { label: 'message p95', stroke: COLORS[4] }, { label: 'execution p95', stroke: COLORS[3] }]}
        data=${columns(points, [(p) => p.latencyMean, (p) => p.latencyP95, (p) => p.executionP95])} />
      <${Chart} id="chart-memory" title="Memory" unit=${formatBytes}
        series=${[{ label: 'server (resident)', stroke: COLORS[0] }, { label: 'agents (linear memory, right)', stroke: COLORS[1], right: true }]}
        data=${columns(points, [(p) => p.processMemory, (p) => p.agentMemory])} />
    </div>
  </div>`;
}
