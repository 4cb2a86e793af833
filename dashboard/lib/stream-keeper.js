/**
 * When the page keeps the message stream (stream.js) open, and when it tries
 * again. A handshake refused for a bad credential counts as a failed
 * authentication, and the server blocks a source that fails too often, so:
 * - the stream opens only after the API has just answered this page, and not
 *   with an API key in use (a browser cannot put one on a WebSocket
 *   handshake: it would only be refused, and counted);
 * - a connection that drops after opening is tried again soon, by itself;
 * - one that never opened is tried again only on a later `ensure` (after the
 *   next successful call), once a growing wait is over.
 */
import { connectStream, reconnectDelay } from './stream.js';

/** @typedef {import('./stream.js').StreamState} StreamState */

/**
 * @param {{ url: string, onFrame: (frame: unknown) => void, onState: (state: StreamState) => void, allowed: () => boolean, apiKeyInUse: () => boolean }} options
 * `allowed` says whether the API accepts this page's credential now.
 */
export function createStreamKeeper({ url, onFrame, onState, allowed, apiKeyInUse }) {
  /** @type {ReturnType<typeof connectStream> | undefined} */
  let stream;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  /** Handshakes in a row that did not open. */
  let failures = 0;
  let retryAt = 0;

  function ensure() {
    if (stream !== undefined || !allowed()) return;
    if (apiKeyInUse()) {
      onState('down');
      return;
    }
    if (Date.now() < retryAt) return;
    onState('connecting');
    stream = connectStream({
      url,
      onFrame,
      onOpen: () => {
        failures = 0;
        onState('live');
      },
      onClose: (opened) => {
        stream = undefined;
        const delay = reconnectDelay(opened ? 0 : failures++);
        retryAt = Date.now() + delay;
        if (opened) timer = setTimeout(ensure, delay);
        onState(opened ? 'connecting' : 'down');
      },
    });
  }

  return {
    ensure,
    /** Closes the stream and forgets any retry: after a 401, or when the page stops. */
    drop() {
      stream?.close();
      stream = undefined;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      onState('down');
    },
    /** The credential changed: the next `ensure` need not wait. */
    resetWait() {
      retryAt = 0;
      failures = 0;
    },
  };
}
