/**
 * `svc agents get AGENT_ID`: one agent, its state and counters.
 */
import { defineCommand } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { agentDetails, OUTPUT_FLAG, render } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';

export const agentsGetCommand = defineCommand({
  path: ['agents', 'get'],
  summary: 'Show one agent: its state, limits, module and counters.',
  args: [{ name: 'AGENT_ID', description: "The agent's id, as deploy printed it, or its name." }],
  flags: { output: OUTPUT_FLAG, ...CONNECTION_FLAGS },
  examples: [
    { description: 'Show an agent', command: 'svc agents get 01J9Z3K4TQ8W5V6X7Y8Z9A0B1C' },
    { description: "Read one field in a script", command: "svc agents get \"$id\" -o json | jq -r .state" },
  ],
  async run({ values, args: [agentId = ''], io }) {
    return withRemote(values, io, async ({ grpc, output }) => {
      const agent = await grpc().get(agentId, { timeoutMs: CALL_TIMEOUT_MS });
      io.out(render(output, agent, { table: () => agentDetails(agent) }));
      return EXIT.ok;
    });
  },
});
