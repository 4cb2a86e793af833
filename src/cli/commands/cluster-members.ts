/**
 * `svc cluster members`: the cluster's members as the server called sees
 * them (the ListMembers RPC), one line each.
 */
import type { ClusterMember } from '../../agents/agent-service-types.js';
import { defineCommand } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { OUTPUT_FLAG, render, table } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';

function membersTable(members: readonly ClusterMember[]): string {
  return table([
    ['NODE', 'STATE', 'ADDRESS', 'GRPC', 'HTTP', 'INCARNATION', 'AGENTS'],
    ...members.map((m) => [m.node_id, m.state, m.address || '-', m.grpc_address || '-', m.http_address || '-', String(m.incarnation), String(m.agents)]),
  ]);
}

export const clusterMembersCommand = defineCommand({
  path: ['cluster', 'members'],
  summary: "List the cluster's members as the server sees them.",
  description: `Prints each member's node id, state (alive, suspect, dead or left), gossip, gRPC and HTTP
addresses, incarnation and the number of agents the registry places on it. A server that runs
alone lists itself.`,
  args: [],
  flags: { output: OUTPUT_FLAG, ...CONNECTION_FLAGS },
  examples: [
    { description: 'The members, as a table', command: 'svc cluster members' },
    { description: 'As JSON, from another node', command: 'svc cluster members --server 10.0.0.2:50051 -o json' },
  ],
  async run({ values, io }) {
    return withRemote(values, io, async ({ grpc, output }) => {
      const { members } = await grpc().listMembers({ timeoutMs: CALL_TIMEOUT_MS });
      io.out(render(output, { members }, { table: () => membersTable(members) }));
      return EXIT.ok;
    });
  },
});
