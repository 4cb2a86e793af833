/**
 * `svc keys rotate KEY_ID`: a new secret for a key.
 */
import { defineCommand } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { OUTPUT_FLAG } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';
import { printIssued } from './keys-output.js';

export const keysRotateCommand = defineCommand({
  path: ['keys', 'rotate'],
  summary: 'Give an API key a new secret; the old one works for the grace period.',
  description: `The new key goes to stdout alone, as keys create prints it; the old secret keeps working for the
server's security.grace_period, so its users can move over. Needs system:configure.`,
  args: [{ name: 'KEY_ID', description: "The key's id (the part after svc_)." }],
  flags: { output: OUTPUT_FLAG, ...CONNECTION_FLAGS },
  examples: [{ description: 'Rotate a key and keep the new one', command: 'new_key=$(svc keys rotate q3vzx7ad2kfl4mno)' }],
  async run({ values, args: [keyId = ''], io }) {
    return withRemote(values, io, async ({ grpc, output }) => {
      printIssued(io, output, await grpc().rotateKey(keyId, { timeoutMs: CALL_TIMEOUT_MS }));
      return EXIT.ok;
    });
  },
});
