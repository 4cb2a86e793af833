/**
 * The agents table's filter: words separated by spaces, all of which must
 * match. `state:failed`, `node:<id>`, `name:<text>` and `id:<text>` match that
 * column (the state exactly, the others by substring); a bare word matches
 * any of them by substring. Case is ignored.
 */
/** @typedef {import('./types.js').Agent} Agent */

const COLUMNS = /** @type {const} */ ({
  state: (/** @type {Agent} */ a) => a.state,
  node: (/** @type {Agent} */ a) => a.node_id,
  name: (/** @type {Agent} */ a) => a.name,
  id: (/** @type {Agent} */ a) => a.agent_id,
});

/**
 * @param {string} query
 * @returns {(agent: Agent) => boolean}
 */
export function agentFilter(query) {
  const words = query.toLowerCase().split(/\s+/).filter((w) => w !== '');
  const tests = words.map((word) => {
    const colon = word.indexOf(':');
    const column = colon > 0 ? word.slice(0, colon) : '';
    if (Object.hasOwn(COLUMNS, column)) {
      const value = word.slice(colon + 1);
      const read = COLUMNS[/** @type {keyof typeof COLUMNS} */ (column)];
      return column === 'state' ? (/** @type {Agent} */ a) => read(a).toLowerCase() === value : (/** @type {Agent} */ a) => read(a).toLowerCase().includes(value);
    }
    return (/** @type {Agent} */ a) => Object.values(COLUMNS).some((read) => read(a).toLowerCase().includes(word));
  });
  return (agent) => tests.every((test) => test(agent));
}
