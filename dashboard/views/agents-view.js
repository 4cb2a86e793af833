/** The agents table: live, filterable, one row per agent with what the API and the metrics say of it; the deploy form beside it. */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { throttledSeconds } from '../lib/features.js';
import { agentFilter } from '../lib/filter.js';
import { formatBytes, formatNumber, formatSeconds, shortId } from '../lib/format.js';
import { DeployForm } from './deploy-form.js';
import { ErrorNote } from './error-note.js';
import { StateBadge } from './state-badge.js';

/** @typedef {import('../lib/hub.js').Hub} Hub */
/** @typedef {import('../lib/types.js').Agent} Agent */

/** Rows drawn at most; more are reached by the filter. */
export const MAX_ROWS = 500;

/**
 * The throttled time of each agent, from its field where the API has one, else from the metric; undefined when neither exists.
 * @param {Hub} hub
 * @returns {((agent: Agent) => number | undefined) | undefined}
 */
function throttledReader(hub) {
  const { features, throttled } = hub.state;
  const field = features.throttledField;
  if (field !== undefined) return (agent) => throttledSeconds(/** @type {Record<string, unknown>} */ (/** @type {unknown} */ (agent)), field);
  if (throttled.size > 0) return (agent) => throttled.get(agent.agent_id) ?? 0;
  return undefined;
}

/** @param {{ hub: Hub }} props */
function Summary({ hub }) {
  const { agents } = hub.state;
  const latest = hub.metrics.points().at(-1);
  /** @type {Map<string, number>} */
  const byState = new Map();
  for (const a of agents) byState.set(a.state, (byState.get(a.state) ?? 0) + 1);
  const ms = (/** @type {number | null | undefined} */ v) => (v === null || v === undefined ? '–' : `${formatNumber(v)} ms`);
  return html`<section class="summary" aria-label="summary">
    <div><span class="figure" id="agent-count">${agents.length}</span><span class="label">agents${[...byState].map(([s, n]) => ` · ${n} ${s}`).join('')}</span></div>
    <div><span class="figure">${latest === undefined ? '–' : formatNumber(latest.sent)}</span><span class="label">messages/s</span></div>
    <div><span class="figure">${latest === undefined ? '–' : formatNumber(latest.executionErrors + latest.messageErrors)}</span><span class="label">errors/s</span></div>
    <div><span class="figure">${ms(latest?.latencyP95)}</span><span class="label">p95 latency</span></div>
    <div><span class="figure">${latest === undefined ? '–' : formatBytes(latest.processMemory)}</span><span class="label">server memory</span></div>
  </section>`;
}

/** @param {{ hub: Hub }} props */
export function AgentsView({ hub }) {
  const [query, setQuery] = useState('');
  const { agents, agentsTruncated, listed, error } = hub.state;
  const shown = agents.filter(agentFilter(query));
  const throttled = throttledReader(hub);
  return html`<div class="view" data-view="agents">
    <${Summary} hub=${hub} />
    <div class="columns">
      <section class="card grow" aria-labelledby="agents-title">
        <div class="card-head">
          <h2 id="agents-title">Agents</h2>
          <input id="agent-filter" type="search" placeholder="filter: name, state:failed, node:…" value=${query} onInput=${(/** @type {Event} */ e) => setQuery(/** @type {HTMLInputElement} */ (e.currentTarget).value)} aria-label="filter agents" />
        </div>
        <${ErrorNote} error=${error?.status === 401 ? undefined : error} />
        <table class="agents" id="agents-table">
          <thead>
            <tr>
              <th>Name</th><th>State</th><th>Node</th><th class="num">Restarts</th><th class="num">Messages in / out</th><th class="num">Memory</th>
              ${throttled === undefined ? null : html`<th class="num">Throttled</th>`}
            </tr>
          </thead>
          <tbody>
            ${shown.slice(0, MAX_ROWS).map(
              (a) => html`<tr key=${a.agent_id} data-agent-id=${a.agent_id} data-agent-name=${a.name} data-state=${a.state}>
                <td><a href=${`#/agents/${encodeURIComponent(a.agent_id)}`}>${a.name}</a> <span class="muted mono">${shortId(a.agent_id)}</span></td>
                <td><${StateBadge} state=${a.state} /></td>
                <td class="mono" title=${a.node_id}>${shortId(a.node_id)}</td>
                <td class="num">${a.restart_count}</td>
                <td class="num">${formatNumber(a.messages_received)} / ${formatNumber(a.messages_sent)}</td>
                <td class="num" title=${`limit ${formatBytes(a.resources.memory_limit)}`}>${formatBytes(a.memory_bytes)}</td>
                ${throttled === undefined ? null : html`<td class="num">${formatSeconds(throttled(a) ?? 0)}</td>`}
              </tr>`,
            )}
          </tbody>
        </table>
        ${!listed ? html`<p class="muted">Loading…</p>` : agents.length === 0 ? html`<p class="muted" id="no-agents">No agents yet: deploy one.</p>` : null}
        ${shown.length > MAX_ROWS ? html`<p class="muted">${shown.length - MAX_ROWS} more: refine the filter.</p>` : null}
        ${agentsTruncated ? html`<p class="muted">Only the first ${agents.length} agents are listed.</p>` : null}
        ${listed && agents.length > 0 && shown.length === 0 ? html`<p class="muted">No agent matches the filter.</p>` : null}
      </section>
      <${DeployForm} hub=${hub} />
    </div>
  </div>`;
}
