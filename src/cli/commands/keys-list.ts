/**
 * `svc keys list`: every API key, revoked ones included; never a secret.
 */
import { defineCommand } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { OUTPUT_FLAG, render } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';
import { keysTable } from './keys-output.js';

export const keysListCommand = defineCommand({
  path: ['keys', 'list'],
  summary: 'List the API keys, oldest first, without their secrets.',
  description: '-o wide adds when each was last rotated or revoked, and its rate. Needs system:configure.',
  args: [],
  flags: { output: OUTPUT_FLAG, ...CONNECTION_FLAGS },
  examples: [
    { description: 'List the keys', command: 'svc keys list' },
    { description: 'The ids of the keys in a rotation grace period', command: "svc keys list -o json | jq -r '.keys[] | select(.grace_until != \"\") | .key_id'" },
  ],
  async run({ values, io }) {
    return withRemote(values, io, async ({ grpc, output }) => {
      const { keys } = await grpc().listKeys({ timeoutMs: CALL_TIMEOUT_MS });
      io.out(render(output, { keys }, { table: () => keysTable(keys, false), wide: () => keysTable(keys, true) }));
      return EXIT.ok;
    });
  },
});
