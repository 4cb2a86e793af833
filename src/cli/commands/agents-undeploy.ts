/**
 * `svc agents undeploy AGENT_ID`: stops an agent and removes it.
 */
import { defineCommand } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { OUTPUT_FLAG, render } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';

export const agentsUndeployCommand = defineCommand({
  path: ['agents', 'undeploy'],
  summary: 'Stop an agent and remove it.',
  description: 'A message it is handling finishes first (or is cut at runtime.agent_shutdown_timeout).',
  args: [{ name: 'AGENT_ID', description: "The agent's id or name." }],
  flags: { output: OUTPUT_FLAG, ...CONNECTION_FLAGS },
  examples: [{ description: 'Undeploy an agent', command: 'svc agents undeploy "$id"' }],
  async run({ values, args: [agentId = ''], io }) {
    return withRemote(values, io, async ({ grpc, output }) => {
      await grpc().undeploy(agentId, { timeoutMs: CALL_TIMEOUT_MS });
      io.out(render(output, { agent_id: agentId, undeployed: true }, { table: () => `undeployed ${agentId}\n` }));
      return EXIT.ok;
    });
  },
});
