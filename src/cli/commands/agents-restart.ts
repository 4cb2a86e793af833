/**
 * `svc agents restart AGENT`: restarts a failed (or running) agent through
 * RestartAgent and prints it once it runs again.
 */
import { defineCommand } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { agentDetails, OUTPUT_FLAG, render } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';

export const agentsRestartCommand = defineCommand({
  path: ['agents', 'restart'],
  summary: 'Restart a failed or running agent.',
  description: `The agent gets a fresh instance (its memory is not kept) and a fresh restart count window; a message it
is handling finishes first. Messages sent meanwhile wait in its mailbox. Prints the agent once it runs again.`,
  args: [{ name: 'AGENT_ID', description: "The agent's id or name." }],
  flags: { output: OUTPUT_FLAG, ...CONNECTION_FLAGS },
  examples: [
    { description: 'Bring a failed agent back', command: 'svc agents restart "$id"' },
    { description: 'Restart and read its new state', command: 'svc agents restart "$id" -o json | jq -r .state' },
  ],
  async run({ values, args: [agentId = ''], io }) {
    return withRemote(values, io, async ({ grpc, output }) => {
      const agent = await grpc().restart(agentId, { timeoutMs: CALL_TIMEOUT_MS });
      io.out(render(output, agent, { table: () => agentDetails(agent) }));
      return EXIT.ok;
    });
  },
});
