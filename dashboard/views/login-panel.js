/**
 * Shown when the API answers 401: the browser login (OIDC, `GET
 * /api/v1/auth/login`, which comes back to this page with a session cookie)
 * and an API key, kept for this tab only and sent as `X-API-Key`.
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { LOGIN_PATH } from '../lib/features.js';

/** @typedef {import('../lib/hub.js').Hub} Hub */

/** @param {{ hub: Hub }} props */
export function LoginPanel({ hub }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const { auth, features } = hub.state;
  /** @param {Event} event */
  const submit = async (event) => {
    event.preventDefault();
    if (key.trim() === '') return;
    setBusy(true);
    try {
      await hub.useApiKey(key);
      setKey('');
    } finally {
      setBusy(false);
    }
  };
  return html`<div class="overlay">
    <section class="card login" aria-labelledby="login-title" data-view="login">
      <h2 id="login-title">Sign in to svc</h2>
      <p>This server requires authentication.</p>
      ${auth.message === '' ? null : html`<p class="error" role="alert" id="login-refused">${auth.message}</p>`}
      ${features.login
        ? html`<p><a class="button primary" id="login-oidc" href=${`${LOGIN_PATH}?return_to=${encodeURIComponent('/dashboard')}`}>Log in</a></p>
            <p class="muted">or use an API key:</p>`
        : null}
      <form onSubmit=${submit}>
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autocomplete="off" placeholder="svc_…" value=${key} onInput=${(/** @type {Event} */ e) => setKey(/** @type {HTMLInputElement} */ (e.currentTarget).value)} />
        <button type="submit" disabled=${busy}>Use key</button>
      </form>
      <p class="muted small">The key stays in this browser tab (session storage) and is sent as <code>X-API-Key</code>.</p>
    </section>
  </div>`;
}
