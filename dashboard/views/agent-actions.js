/**
 * What can be done to an agent: undeploy (asked twice), and restart and
 * update where this server's API has them (lib/features.js).
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { bytesToBase64 } from '../lib/base64.js';
import { ErrorNote } from './error-note.js';

/** @typedef {import('../lib/hub.js').Hub} Hub */

/** @param {{ hub: Hub, agentId: string, name: string }} props */
export function AgentActions({ hub, agentId, name }) {
  const { restart, update } = hub.state.features;
  const [confirming, setConfirming] = useState(false);
  const [updating, setUpdating] = useState(false);
  const [file, setFile] = useState(/** @type {File | undefined} */ (undefined));
  const [keepState, setKeepState] = useState(true);
  const [rollbackWindow, setRollbackWindow] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {unknown} */ (undefined));
  const [done, setDone] = useState('');

  /** @param {() => Promise<unknown>} action @param {string} doneText */
  const run = async (action, doneText) => {
    setBusy(true);
    setError(undefined);
    setDone('');
    try {
      await action();
      setDone(doneText);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const undeploy = () =>
    run(async () => {
      await hub.undeploy(agentId);
      location.hash = '#/';
    }, 'Undeployed.');

  /** @param {Event} event */
  const submitUpdate = (event) => {
    event.preventDefault();
    if (update === undefined || file === undefined) return;
    void run(async () => {
      /** @type {Record<string, unknown>} */
      const body = { wasm_module: bytesToBase64(new Uint8Array(await file.arrayBuffer())) };
      if (update.bodyFields.includes('keep_state')) body.keep_state = keepState;
      if (update.bodyFields.includes('rollback_window') && rollbackWindow.trim() !== '') body.rollback_window = rollbackWindow.trim();
      await hub.operate(update, agentId, body);
      setUpdating(false);
    }, 'Updated.');
  };

  return html`<div class="actions">
    ${restart === undefined ? null : html`<button id="restart-agent" disabled=${busy} onClick=${() => run(() => hub.operate(restart, agentId), 'Restarted.')}>Restart</button>`}
    ${update === undefined ? null : html`<button id="update-agent" disabled=${busy} onClick=${() => setUpdating(!updating)}>Update module…</button>`}
    ${confirming
      ? html`<span class="confirm">Undeploy ${name}?
          <button class="danger" id="undeploy-confirm" disabled=${busy} onClick=${undeploy}>Undeploy</button>
          <button id="undeploy-cancel" onClick=${() => setConfirming(false)}>Keep</button></span>`
      : html`<button class="danger-outline" id="undeploy-agent" disabled=${busy} onClick=${() => setConfirming(true)}>Undeploy…</button>`}
    ${updating && update !== undefined
      ? html`<form class="update" id="update-form" onSubmit=${submitUpdate}>
          <label>New module (.wasm)<input id="update-file" type="file" accept=".wasm,application/wasm" required onChange=${(/** @type {Event} */ e) => setFile(/** @type {HTMLInputElement} */ (e.currentTarget).files?.[0])} /></label>
          ${update.bodyFields.includes('keep_state')
            ? html`<label class="inline"><input type="checkbox" id="update-keep-state" checked=${keepState} onChange=${(/** @type {Event} */ e) => setKeepState(/** @type {HTMLInputElement} */ (e.currentTarget).checked)} /> keep its state</label>`
            : null}
          ${update.bodyFields.includes('rollback_window')
            ? html`<label>Rollback window<input id="update-rollback-window" placeholder="server default; 20 (messages) or 30s" value=${rollbackWindow} onInput=${(/** @type {Event} */ e) => setRollbackWindow(/** @type {HTMLInputElement} */ (e.currentTarget).value)} /></label>`
            : null}
          <button type="submit" class="primary" disabled=${busy || file === undefined}>Update</button>
        </form>`
      : null}
    ${done === '' ? null : html`<span class="ok" id="action-result">${done}</span>`}
    <${ErrorNote} error=${error} />
  </div>`;
}
