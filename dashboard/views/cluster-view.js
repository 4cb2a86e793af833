/** The cluster's members (`GET /api/v1/cluster/members`), where the API has them; each node's own dashboard is a link away. */
import { html } from 'htm/preact';

/** @typedef {import('../lib/hub.js').Hub} Hub */

const TONE = /** @type {Record<string, string>} */ ({ alive: 'ok', suspect: 'warn', dead: 'bad', left: 'idle' });

/** @param {{ hub: Hub }} props */
export function ClusterView({ hub }) {
  const members = hub.state.members;
  return html`<div class="view" data-view="cluster">
    <section class="card" aria-labelledby="cluster-title">
      <h2 id="cluster-title">Cluster members</h2>
      ${members === undefined ? html`<p class="muted">Loading…</p>` : null}
      <table id="cluster-table">
        <thead><tr><th>Node</th><th>State</th><th class="num">Incarnation</th><th class="num">Agents</th><th>Gossip</th><th>gRPC</th><th>HTTP</th></tr></thead>
        <tbody>
          ${(members ?? []).map(
            (m) => html`<tr key=${m.node_id} data-node-id=${m.node_id} data-state=${m.state}>
              <td class="mono">${m.node_id}</td>
              <td><span class=${`badge badge-${TONE[m.state] ?? 'idle'}`}>${m.state}</span></td>
              <td class="num">${m.incarnation ?? ''}</td>
              <td class="num">${m.agents ?? ''}</td>
              <td class="mono">${m.address ?? ''}</td>
              <td class="mono">${m.grpc_address ?? ''}</td>
              <td class="mono">${m.http_address ? html`<a href=${`${location.protocol}//${m.http_address}/dashboard`}>${m.http_address}</a>` : ''}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </section>
  </div>`;
}
