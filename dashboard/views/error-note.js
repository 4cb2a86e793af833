/** A failed call as the API explained it: the code, the message and its details. */
import { html } from 'htm/preact';

/** @param {{ error: unknown }} props */
export function ErrorNote({ error }) {
  if (error === undefined || error === null) return null;
  const e = /** @type {{ code?: string, message?: string, metadata?: Record<string, string> }} */ (error);
  const details = Object.entries(e.metadata ?? {});
  return html`<p class="error" role="alert">
    ${e.code === undefined ? null : html`<strong>${e.code}</strong> `}${e.message ?? String(error)}
    ${details.length === 0 ? null : html`<span class="details">${details.map(([k, v]) => `${k}=${v}`).join(' · ')}</span>`}
  </p>`;
}
