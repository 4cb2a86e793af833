/** How the views write numbers, sizes, times and ids. */

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** @param {number} bytes */
export function formatBytes(bytes) {
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${BYTE_UNITS[unit]}`;
}

/**
 * Seconds as a short duration: `0 s`, `350 ms`, `12.5 s`, `3 min 20 s`, `2 h 5 min`.
 * @param {number} seconds
 */
export function formatSeconds(seconds) {
  if (seconds === 0) return '0 s';
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${Number(seconds.toFixed(seconds < 10 ? 2 : 1))} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}

/**
 * A rate with at most three significant digits.
 * @param {number} value
 */
export function formatNumber(value) {
  if (value === 0) return '0';
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en');
  return String(Number(value.toPrecision(3)));
}

/**
 * The local time of an RFC 3339 instant, to the millisecond: messages often come within one second.
 * @param {string} at
 */
export function formatTime(at) {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return at;
  const pad = (/** @type {number} */ n, /** @type {number} */ width = 2) => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/**
 * The end of an id, enough to tell agents apart in a table (a ULID's first characters are its time).
 * @param {string} id
 */
export function shortId(id) {
  return id.length > 8 ? `…${id.slice(-8)}` : id;
}

/**
 * A message's counterpart as the agent page shows it.
 * @param {string} party an agent id, `client:<principal>` or `platform`
 * @param {(id: string) => string | undefined} nameOf
 */
export function partyName(party, nameOf) {
  return nameOf(party) ?? (party.startsWith('client:') || party === 'platform' ? party : shortId(party));
}
