/** An agent's lifecycle timeline (lib/timeline.js), newest first, each entry with its reason and where it was learnt. */
import { html } from 'htm/preact';
import { formatTime } from '../lib/format.js';
import { StateBadge } from './state-badge.js';

/** @typedef {import('../lib/timeline.js').TimelineEntry} TimelineEntry */

const TITLE = /** @type {Record<TimelineEntry['kind'], string>} */ ({
  deployed: 'deployed',
  transition: 'state',
  crash: 'crashed',
  failure: 'message failed',
  restart: 'restarted',
  update: 'updated',
  rollback: 'rolled back',
  undeployed: 'undeployed',
});

/** @param {{ entries: TimelineEntry[] }} props */
export function TimelineView({ entries }) {
  return html`<section class="card" aria-labelledby="timeline-title">
    <h2 id="timeline-title">Lifecycle</h2>
    <ol class="timeline" id="timeline">
      ${[...entries].reverse().map(
        (e) => html`<li class=${`tl tl-${e.kind}`} data-kind=${e.kind}>
          <time datetime=${e.at}>${formatTime(e.at)}</time>
          <span class="tl-what">
            <strong>${TITLE[e.kind]}</strong>
            ${e.from == null ? null : html` <${StateBadge} state=${e.from} /> →`}
            ${e.to === undefined ? null : html` <${StateBadge} state=${e.to} />`}
          </span>
          <span class="tl-reason" title=${e.source === 'stream' ? 'from the server' : 'seen through the API'}>${e.reason}</span>
        </li>`,
      )}
    </ol>
  </section>`;
}
