/** Deploys an agent from a `.wasm` file chosen in the browser (`POST /api/v1/agents`, the module in base64). */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { bytesToBase64 } from '../lib/base64.js';
import { ErrorNote } from './error-note.js';

/** @typedef {import('../lib/hub.js').Hub} Hub */

const MIB = 1024 * 1024;

/** @param {{ hub: Hub }} props */
export function DeployForm({ hub }) {
  const [name, setName] = useState('');
  const [file, setFile] = useState(/** @type {File | undefined} */ (undefined));
  const [capabilities, setCapabilities] = useState('');
  const [memory, setMemory] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {unknown} */ (undefined));
  const [deployed, setDeployed] = useState(/** @type {{ id: string, name: string } | undefined} */ (undefined));

  /** @param {Event} event */
  const submit = async (event) => {
    event.preventDefault();
    if (file === undefined) return;
    const agentName = name.trim() === '' ? file.name.replace(/\.wasm$/i, '') : name.trim();
    setBusy(true);
    setError(undefined);
    setDeployed(undefined);
    try {
      const bytes = new Uint8Array(await file.arrayBuffer());
      const id = await hub.deploy(
        {
          name: agentName,
          bytes,
          capabilities: capabilities.split(',').map((c) => c.trim()).filter((c) => c !== ''),
          ...(memory.trim() === '' ? {} : { memoryLimitBytes: Math.round(Number(memory) * MIB) }),
        },
        bytesToBase64,
      );
      setDeployed({ id, name: agentName });
      setName('');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  /** @param {(value: string) => void} set */
  const text = (set) => (/** @type {Event} */ e) => set(/** @type {HTMLInputElement} */ (e.currentTarget).value);
  return html`<section class="card deploy" aria-labelledby="deploy-title">
    <h2 id="deploy-title">Deploy an agent</h2>
    <form id="deploy-form" onSubmit=${submit}>
      <label>Module (.wasm)<input id="deploy-file" type="file" accept=".wasm,application/wasm" required onChange=${(/** @type {Event} */ e) => setFile(/** @type {HTMLInputElement} */ (e.currentTarget).files?.[0])} /></label>
      <label>Name<input id="deploy-name" type="text" placeholder=${file === undefined ? 'from the file name' : file.name.replace(/\.wasm$/i, '')} value=${name} onInput=${text(setName)} /></label>
      <label>Capabilities<input id="deploy-capabilities" type="text" placeholder="comma-separated, optional" value=${capabilities} onInput=${text(setCapabilities)} /></label>
      <label>Memory limit (MiB)<input id="deploy-memory" type="number" min="0" step="any" placeholder="server default" value=${memory} onInput=${text(setMemory)} /></label>
      <button type="submit" class="primary" disabled=${busy || file === undefined}>${busy ? 'Deploying…' : 'Deploy'}</button>
    </form>
    ${deployed === undefined ? null : html`<p class="ok" id="deploy-result">Deployed <a href=${`#/agents/${encodeURIComponent(deployed.id)}`}>${deployed.name}</a> <code>${deployed.id}</code></p>`}
    <${ErrorNote} error=${error} />
  </section>`;
}
