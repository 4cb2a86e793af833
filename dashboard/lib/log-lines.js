/**
 * One entry of an agent's log (the API of recent log lines) as the page
 * shows it: its time and its text, under whichever of the usual field names
 * the entry uses; anything else is shown as its JSON.
 */

const TIME_FIELDS = ['time', 'created_at', 'at', 'timestamp'];
const TEXT_FIELDS = ['line', 'message', 'text', 'content', 'msg'];

/**
 * @param {unknown} entry
 * @returns {{ at: string | undefined, text: string }}
 */
export function logLine(entry) {
  if (typeof entry === 'string') return { at: undefined, text: entry };
  if (typeof entry !== 'object' || entry === null) return { at: undefined, text: JSON.stringify(entry) };
  const e = /** @type {Record<string, unknown>} */ (entry);
  const at = TIME_FIELDS.map((f) => e[f]).find((v) => typeof v === 'string');
  const text = TEXT_FIELDS.map((f) => e[f]).find((v) => typeof v === 'string');
  return { at: typeof at === 'string' ? at : undefined, text: typeof text === 'string' ? text : JSON.stringify(entry) };
}
