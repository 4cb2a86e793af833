/** An agent's state as a coloured badge; the colour says whether it is well (running), busy, away or in trouble. */
import { html } from 'htm/preact';

const TONE = /** @type {Record<string, string>} */ ({
  running: 'ok',
  executing: 'busy',
  starting: 'busy',
  hibernated: 'idle',
  restarting: 'warn',
  stopping: 'idle',
  stopped: 'idle',
  failed: 'bad',
});

/** @param {{ state: string }} props */
export function StateBadge({ state }) {
  return html`<span class=${`badge badge-${TONE[state] ?? 'idle'}`} data-state=${state}>${state}</span>`;
}
