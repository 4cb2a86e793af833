/**
 * Sends the agent a message and shows its answer: the message asks for one
 * with `reply_with`, and the reply (or the platform's failure) is the message
 * whose `in_reply_to` carries it, from the stream or the agent's history.
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ErrorNote } from './error-note.js';

/** @typedef {import('../lib/hub.js').Hub} Hub */
/** @typedef {import('../lib/hub.js').PendingSend} PendingSend */

/** The 22 FIPA-ACL performatives the API accepts. */
export const PERFORMATIVES = [
  'accept-proposal', 'agree', 'cancel', 'cfp', 'confirm', 'disconfirm', 'failure', 'inform', 'inform-if', 'inform-ref', 'not-understood',
  'propagate', 'propose', 'proxy', 'query-if', 'query-ref', 'refuse', 'reject-proposal', 'request', 'request-when', 'request-whenever', 'subscribe',
];

/** @param {{ hub: Hub, agentId: string }} props */
export function SendForm({ hub, agentId }) {
  const [type, setType] = useState('request');
  const [content, setContent] = useState('');
  const [sent, setSent] = useState(/** @type {PendingSend | undefined} */ (undefined));
  const [error, setError] = useState(/** @type {unknown} */ (undefined));
  const [busy, setBusy] = useState(false);

  /** @param {Event} event */
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setSent(undefined);
    try {
      setSent(await hub.send(agentId, type, content));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const answer = sent === undefined ? undefined : hub.replyTo(sent);
  return html`<section class="card" aria-labelledby="send-title">
    <h2 id="send-title">Send a message</h2>
    <form id="send-form" class="send" onSubmit=${submit}>
      <select id="send-type" aria-label="performative" value=${type} onChange=${(/** @type {Event} */ e) => setType(/** @type {HTMLSelectElement} */ (e.currentTarget).value)}>
        ${PERFORMATIVES.map((p) => html`<option value=${p}>${p}</option>`)}
      </select>
      <textarea id="send-content" rows="2" placeholder="content" aria-label="content" value=${content} onInput=${(/** @type {Event} */ e) => setContent(/** @type {HTMLTextAreaElement} */ (e.currentTarget).value)}></textarea>
      <button type="submit" class="primary" disabled=${busy}>Send</button>
    </form>
    <${ErrorNote} error=${error} />
    ${sent === undefined || answer === undefined
      ? null
      : answer.reply !== undefined
        ? html`<div class=${`reply ${answer.reply.message_type === 'failure' ? 'reply-failure' : ''}`} id="send-reply" data-reply-type=${answer.reply.message_type}>
            <span class="perf">${answer.reply.message_type}</span> <span class="muted">from ${hub.nameOf(answer.reply.sender) ?? answer.reply.sender}</span>
            <pre id="send-reply-content">${answer.reply.content ?? ''}</pre>
          </div>`
        : html`<p class="muted" id="send-waiting">${answer.timedOut ? 'No reply yet.' : 'Sent; waiting for the reply…'} <code>${sent.messageId}</code></p>`}
  </section>`;
}
