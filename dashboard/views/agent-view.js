/** One agent: what it is, what can be done to it, its lifecycle, its messages, a send form and its log lines. */
import { html } from 'htm/preact';
import { formatBytes, formatNumber, formatTime } from '../lib/format.js';
import { AgentActions } from './agent-actions.js';
import { ErrorNote } from './error-note.js';
import { LogsView } from './logs-view.js';
import { MessageList } from './message-list.js';
import { SendForm } from './send-form.js';
import { StateBadge } from './state-badge.js';
import { TimelineView } from './timeline-view.js';

/** @typedef {import('../lib/hub.js').Hub} Hub */

/** Messages listed on the page. */
export const MESSAGES_SHOWN = 100;

/** @param {{ hub: Hub, agentId: string }} props */
export function AgentView({ hub, agentId }) {
  const { focused, focusError, features, logs, logStream } = hub.state;
  const agent = focused?.agent_id === agentId ? focused : undefined;
  const nameOf = (/** @type {string} */ id) => hub.nameOf(id);
  return html`<div class="view" data-view="agent" data-agent-id=${agentId}>
    <p><a href="#/">← Agents</a></p>
    <${ErrorNote} error=${focusError} />
    ${agent === undefined
      ? focusError === undefined ? html`<p class="muted">Loading…</p>` : null
      : html`<section class="card agent-head">
          <div class="card-head">
            <h1 id="agent-name">${agent.name}</h1>
            <${StateBadge} state=${agent.state} />
            <span class="spacer"></span>
            <${AgentActions} hub=${hub} agentId=${agentId} name=${agent.name} />
          </div>
          <dl class="facts">
            <div><dt>id</dt><dd class="mono">${agent.agent_id}</dd></div>
            <div><dt>node</dt><dd class="mono">${agent.node_id}</dd></div>
            <div><dt>restarts</dt><dd id="agent-restarts">${agent.restart_count}</dd></div>
            <div><dt>messages in / out</dt><dd>${formatNumber(agent.messages_received)} / ${formatNumber(agent.messages_sent)}</dd></div>
            <div><dt>memory</dt><dd>${formatBytes(agent.memory_bytes)} of ${formatBytes(agent.resources.memory_limit)}</dd></div>
            <div><dt>cpu shares</dt><dd>${agent.resources.cpu_shares}</dd></div>
            <div><dt>module</dt><dd class="mono" title=${agent.module_sha256}>${agent.module_version === undefined ? null : html`v<span id="agent-module-version">${agent.module_version}</span> · `}${agent.module_sha256.slice(0, 12)} · ${formatBytes(agent.module_size)}</dd></div>
            ${agent.previous_module ? html`<div><dt>previous module</dt><dd class="mono" id="agent-previous-module" title=${agent.previous_module.sha256}>v${agent.previous_module.version} · ${agent.previous_module.sha256.slice(0, 12)}</dd></div>` : null}
            <div><dt>deployed</dt><dd>${new Date(agent.created_at).toLocaleDateString('en-CA')} ${formatTime(agent.created_at)}</dd></div>
            ${agent.capabilities.length === 0 ? null : html`<div><dt>capabilities</dt><dd>${agent.capabilities.join(', ')}</dd></div>`}
          </dl>
        </section>`}
    <div class="columns">
      <div class="grow stack">
        <${SendForm} hub=${hub} agentId=${agentId} />
        <${MessageList} agentId=${agentId} messages=${hub.messages.forAgent(agentId, MESSAGES_SHOWN)} nameOf=${nameOf} />
      </div>
      <div class="side stack">
        <${TimelineView} entries=${hub.timelines.entries(agentId)} />
        ${features.logs === undefined ? null : html`<${LogsView} entries=${logs.get(agentId) ?? []} follow=${logStream} />`}
      </div>
    </div>
  </div>`;
}
