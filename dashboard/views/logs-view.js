/** An agent's own log lines (what it writes to fd 2), where the API offers them, newest first. */
import { html } from 'htm/preact';
import { formatTime } from '../lib/format.js';
import { logLine } from '../lib/log-lines.js';

/** @param {{ entries: unknown[], follow: string }} props `follow`: the state of the WebSocket that brings new lines (`down` when polled) */
export function LogsView({ entries, follow }) {
  return html`<section class="card" id="logs-view" data-follow=${follow} aria-labelledby="logs-title">
    <h2 id="logs-title">Log</h2>
    ${entries.length === 0 ? html`<p class="muted">No log lines.</p>` : null}
    <pre class="logs" id="logs">${entries.map(logLine).reverse().map(({ at, text }) => `${at === undefined ? '' : `${formatTime(at)}  `}${text}\n`)}</pre>
  </section>`;
}
