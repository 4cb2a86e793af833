/**
 * One connection to the system-wide message stream (`GET /api/v1/messages`,
 * WebSocket). It does not reconnect by itself: when and whether to try again
 * is the hub's decision, because a failed handshake with a bad credential
 * counts as a failed authentication, and the server blocks a source that
 * fails too often.
 */

/** @typedef {'connecting' | 'live' | 'down'} StreamState */

export const RECONNECT_BASE_MS = 500;
export const RECONNECT_MAX_MS = 30_000;

/**
 * Delay before reconnect attempt `attempt` (0, 1, ...): doubling from RECONNECT_BASE_MS, at most RECONNECT_MAX_MS.
 * @param {number} attempt
 */
export function reconnectDelay(attempt) {
  return Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** Math.min(attempt, 16));
}

/**
 * The stream's URL on the page's own origin.
 * @param {{ protocol: string, host: string }} location
 * @param {string} path
 */
export function streamUrl(location, path) {
  return `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}${path}`;
}

/**
 * @param {{ url: string, onFrame: (frame: unknown) => void, onOpen: () => void, onClose: (opened: boolean) => void }} handlers
 * `onClose` says whether the connection had opened: one that never did was refused (or the server is away).
 */
export function connectStream({ url, onFrame, onOpen, onClose }) {
  const ws = new WebSocket(url);
  let opened = false;
  let closed = false;
  ws.onopen = () => {
    opened = true;
    onOpen();
  };
  ws.onmessage = (event) => {
    if (typeof event.data !== 'string') return;
    let frame;
    try {
      frame = JSON.parse(event.data);
    } catch {
      return; // a frame is one JSON document; anything else is not ours to show
    }
    onFrame(frame);
  };
  ws.onclose = () => {
    if (closed) return;
    closed = true;
    onClose(opened);
  };
  return {
    /** Closes without calling onClose: the caller knows. */
    close() {
      closed = true;
      ws.close();
    },
  };
}
