/**
 * `svc health`: the server's Health RPC. Exit 0 only when the server says it
 * is healthy, so `svc health` works as a readiness probe in scripts.
 */
import { defineCommand } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { healthLine, OUTPUT_FLAG, render } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';

export const healthCommand = defineCommand({
  path: ['health'],
  summary: "Show the server's health; exit 0 only when it is healthy.",
  description: 'Prints the status, the version, the agents at work against the capacity, and the trace id of the call.',
  args: [],
  flags: { output: OUTPUT_FLAG, ...CONNECTION_FLAGS },
  examples: [
    { description: 'Check the server', command: 'svc health' },
    { description: 'Wait in a script until the server is up', command: 'until svc health >/dev/null 2>&1; do sleep 1; done' },
  ],
  async run({ values, io }) {
    return withRemote(values, io, async ({ grpc, output }) => {
      const health = await grpc().health({ timeoutMs: CALL_TIMEOUT_MS });
      io.out(render(output, health, { table: () => healthLine(health) }));
      return health.status === 'healthy' ? EXIT.ok : EXIT.unavailable;
    });
  },
});
