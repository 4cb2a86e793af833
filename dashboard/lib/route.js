/**
 * The view a location hash names: `#/` the agents, `#/agents/<id>` one
 * agent, `#/metrics`, `#/cluster`. Anything else is the agents.
 */

/** @typedef {{ name: 'agents' | 'metrics' | 'cluster' } | { name: 'agent', id: string }} Route */

/**
 * @param {string} hash
 * @returns {Route}
 */
export function routeOf(hash) {
  const agent = /^#\/agents\/([^/]+)$/.exec(hash);
  if (agent !== null) {
    try {
      return { name: 'agent', id: decodeURIComponent(agent[1] ?? '') };
    } catch {
      return { name: 'agents' }; // malformed percent-encoding names no agent
    }
  }
  if (hash === '#/metrics') return { name: 'metrics' };
  if (hash === '#/cluster') return { name: 'cluster' };
  return { name: 'agents' };
}
