/**
 * One page of a cluster's agents: this node's, a page from its store, merged
 * with the other nodes' from the registry, in the store's order
 * (created_at, agent_id) and with the store's page tokens, so a client
 * pages through the whole cluster as through one node.
 */
import { decodePageToken, encodePageToken, type PageKey } from '../store/page-token.js';
import type { Agent } from './agent-service-types.js';

const keyOf = (agent: Agent): PageKey => ({ createdAt: Date.parse(agent.created_at), agentId: agent.agent_id });

function compare(a: PageKey, b: PageKey): number {
  return a.createdAt - b.createdAt || (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0);
}

/**
 * `local` is the store's page for the same token and size (its `more` says
 * whether the store holds agents past it); `remote` every agent elsewhere.
 * Throws the store's `invalid_page_token` error for a token it did not issue.
 */
export function mergePages(local: { agents: Agent[]; more: boolean }, remote: readonly Agent[], pageToken: string, size: number): { agents: Agent[]; next_page_token: string } {
  const after = pageToken === '' ? undefined : decodePageToken(pageToken);
  const later = after === undefined ? remote : remote.filter((agent) => compare(keyOf(agent), after) > 0);
  const merged = [...local.agents, ...later].sort((a, b) => compare(keyOf(a), keyOf(b)));
  const agents = merged.slice(0, size);
  const more = local.more || merged.length > size;
  const last = agents.at(-1);
  return { agents, next_page_token: more && last !== undefined ? encodePageToken(keyOf(last)) : '' };
}
