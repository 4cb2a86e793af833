/** An agent's recent messages, newest first: from the agent's history and the live stream. */
import { html } from 'htm/preact';
import { formatTime, partyName } from '../lib/format.js';

/** @typedef {import('../lib/types.js').Message} Message */

/** Characters of content shown; the whole text is in the title. */
const CONTENT_CHARS = 160;

/** @param {{ agentId: string, messages: Message[], nameOf: (id: string) => string | undefined }} props */
export function MessageList({ agentId, messages, nameOf }) {
  return html`<section class="card" aria-labelledby="messages-title">
    <h2 id="messages-title">Messages</h2>
    ${messages.length === 0 ? html`<p class="muted">No messages yet.</p>` : null}
    <table class="messages" id="messages">
      <tbody>
        ${messages.map((m) => {
          const outgoing = m.sender === agentId;
          const content = m.content ?? '';
          return html`<tr key=${m.message_id} data-message-id=${m.message_id} class=${m.message_type === 'failure' ? 'failed' : ''}>
            <td class="mono"><time datetime=${m.created_at}>${formatTime(m.created_at)}</time></td>
            <td class="dir" title=${outgoing ? 'sent by the agent' : 'to the agent'}>${outgoing ? '→' : '←'}</td>
            <td class="party">${partyName(outgoing ? m.receiver : m.sender, nameOf)}</td>
            <td><span class="perf">${m.message_type}</span></td>
            <td class="content" title=${content}>${content.length > CONTENT_CHARS ? `${content.slice(0, CONTENT_CHARS)}…` : content}</td>
          </tr>`;
        })}
      </tbody>
    </table>
  </section>`;
}
