/**
 * The messages the page has seen, from the streams and from agents' recent
 * history, each once (by `message_id`), the oldest dropped past a limit. It
 * answers the questions of the views: an agent's messages, the reply to a
 * message the page sent, and which agent a platform `failure` is about (the
 * receiver of the message it names in `failed_message_id`).
 */
/** @typedef {import('./types.js').Message} Message */

export const MESSAGE_LIMIT = 5000;
export const PLATFORM = 'platform';

/** @param {number} [limit] */
export function createMessageStore(limit = MESSAGE_LIMIT) {
  /** @type {Map<string, Message>} insertion order: the order they were seen */
  const messages = new Map();

  /**
   * The agent a platform failure is about, when the failed message was seen and was for an agent.
   * @param {Message} message
   * @returns {string | undefined}
   */
  function failureSubject(message) {
    if (message.sender !== PLATFORM || message.message_type !== 'failure') return undefined;
    const failed = message.metadata?.failed_message_id;
    const original = failed === undefined ? undefined : messages.get(failed);
    return original?.receiver;
  }

  return {
    /**
     * @param {Message} message
     * @returns {boolean} whether it is new
     */
    add(message) {
      if (messages.has(message.message_id)) return false;
      messages.set(message.message_id, message);
      if (messages.size > limit) {
        const oldest = messages.keys().next().value;
        if (oldest !== undefined) messages.delete(oldest);
      }
      return true;
    },
    /** @param {string} id */
    get: (id) => messages.get(id),
    failureSubject,
    /**
     * Messages from or to the agent, and failures about messages to it; newest first (ids are ULIDs).
     * @param {string} id
     * @param {number} max
     * @returns {Message[]}
     */
    forAgent(id, max) {
      /** @type {Message[]} */
      const found = [];
      for (const m of messages.values()) if (m.sender === id || m.receiver === id || failureSubject(m) === id) found.push(m);
      found.sort((a, b) => (a.message_id < b.message_id ? 1 : a.message_id > b.message_id ? -1 : 0));
      return found.slice(0, max);
    },
    /**
     * The first answer to a message sent with `reply_with`: the agent's reply, or the platform's failure.
     * @param {string} replyWith
     * @returns {Message | undefined}
     */
    replyTo(replyWith) {
      for (const m of messages.values()) if (m.in_reply_to === replyWith) return m;
      return undefined;
    },
    get size() {
      return messages.size;
    },
  };
}

/** @typedef {ReturnType<typeof createMessageStore>} MessageStore */
