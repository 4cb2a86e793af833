/** The top bar: the views, how live the page is, and the API key in use. */
import { html } from 'htm/preact';

/** @typedef {import('../lib/hub.js').Hub} Hub */

const STREAM_TEXT = /** @type {const} */ ({
  live: ['live', 'The message stream is open: messages and failures arrive as they happen.'],
  connecting: ['connecting', 'Connecting to the message stream…'],
  down: ['polling', 'The message stream is not available (with an API key, browsers cannot present it on a WebSocket); the page polls the API.'],
});

/** @param {{ hub: Hub, route: string }} props */
export function Header({ hub, route }) {
  const { state } = hub;
  const [text, title] = state.auth.required
    ? ['signed out', 'The API asks for a credential.']
    : state.error?.status === 0
      ? ['offline', state.error.message]
      : STREAM_TEXT[state.stream];
  /** @param {string} href @param {string} label @param {boolean} current */
  const link = (href, label, current) => html`<a href=${href} aria-current=${current ? 'page' : undefined}>${label}</a>`;
  return html`<header class="topbar">
    <a class="brand" href="#/">svc</a>
    <nav>
      ${link('#/', 'Agents', route === 'agents' || route === 'agent')}
      ${link('#/metrics', 'Metrics', route === 'metrics')}
      ${state.features.cluster === undefined ? null : link('#/cluster', 'Cluster', route === 'cluster')}
    </nav>
    <span class="spacer"></span>
    ${hub.api.apiKey() ? html`<button class="link" id="forget-key" onClick=${() => hub.forgetApiKey()} title="Forget the API key of this tab">forget key</button>` : null}
    <span class=${`pill pill-${text.replace(' ', '-')}`} id="stream-state" data-stream=${state.stream} title=${title}>${text}</span>
  </header>`;
}
