/**
 * `svc keys revoke KEY_ID`: refuses the key from now on.
 */
import { defineCommand } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { OUTPUT_FLAG, render } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';

export const keysRevokeCommand = defineCommand({
  path: ['keys', 'revoke'],
  summary: 'Revoke an API key at once.',
  description: 'Calls with the key are refused from now on, and token families made from it at their next refresh. Needs system:configure.',
  args: [{ name: 'KEY_ID', description: "The key's id (the part after svc_)." }],
  flags: { output: OUTPUT_FLAG, ...CONNECTION_FLAGS },
  examples: [{ description: 'Revoke a key', command: 'svc keys revoke q3vzx7ad2kfl4mno' }],
  async run({ values, args: [keyId = ''], io }) {
    return withRemote(values, io, async ({ grpc, output }) => {
      const key = await grpc().revokeKey(keyId, { timeoutMs: CALL_TIMEOUT_MS });
      io.out(render(output, key, { table: () => `revoked ${key.key_id}\n` }));
      return EXIT.ok;
    });
  },
});
