/**
 * The system-wide message stream (`GET /api/v1/messages`, WebSocket), kept
 * open: a dropped connection is retried after a growing delay. A stream that
 * cannot open at all (an API key cannot ride on a browser's WebSocket
 * handshake; only the login's session cookie does) reads `down`, and the page
 * polls instead.
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
 * @param {{ url: string, onFrame: (frame: unknown) => void, onState: (state: StreamState) => void }} options
 */
export function openStream({ url, onFrame, onState }) {
  /** @type {WebSocket | undefined} */
  let socket;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let attempt = 0;
  let closed = false;

  function connect() {
    timer = undefined;
    const ws = new WebSocket(url);
    socket = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      attempt = 0;
      onState('live');
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
      if (closed || socket !== ws) return;
      onState(opened ? 'connecting' : 'down');
      timer = setTimeout(connect, reconnectDelay(attempt++));
    };
  }

  onState('connecting');
  connect();
  return {
    /** Drops the current connection and its wait, and connects again now (after a login). */
    reconnect() {
      if (closed) return;
      if (timer !== undefined) clearTimeout(timer);
      const old = socket;
      socket = undefined;
      old?.close();
      attempt = 0;
      connect();
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      socket?.close();
    },
  };
}
