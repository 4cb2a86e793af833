/**
 * `svc keys create --name NAME [--role ROLE]...`: a new API key.
 */
import { parseDuration } from '../../config/units.js';
import { defineCommand, UsageError } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { OUTPUT_FLAG } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';
import { printIssued } from './keys-output.js';

export const keysCreateCommand = defineCommand({
  path: ['keys', 'create'],
  summary: 'Make an API key; its secret is printed this once.',
  description: `The key (svc_<key_id>_<secret>) goes to stdout alone, so a script can keep it; the server keeps
only a hash of its secret. Roles are those of the server's policy (admin, operator, viewer, agent
by default). Needs system:configure.`,
  args: [],
  flags: {
    name: { type: 'string', short: 'n', required: true, value: 'NAME', description: 'A name for people; need not be unique.' },
    role: { type: 'string', short: 'r', multiple: true, value: 'ROLE', description: 'A role of the policy; repeat for several.', suggestions: ['admin', 'operator', 'viewer', 'agent'] },
    'expires-in': { type: 'string', value: 'DURATION', description: 'Lifetime of the key: 12h, 30d, ... (default: never expires).' },
    'rate-limit': { type: 'string', value: 'PER_HOUR', description: "Requests per hour for this key (default: the server's security.rate_limit_per_key)." },
    output: OUTPUT_FLAG,
    ...CONNECTION_FLAGS,
  },
  examples: [
    { description: 'A key for CI that deploys agents, for 90 days', command: 'ci_key=$(svc keys create -n ci -r operator --expires-in 90d)' },
    { description: 'A key for a program that only sends and reads messages', command: 'svc keys create -n bridge -r agent -o json' },
  ],
  async run({ values, io }) {
    const expiresMs = values['expires-in'] === undefined ? 0 : parseDuration(values['expires-in']);
    if (expiresMs === undefined) throw new UsageError(`--expires-in takes a duration (12h, 30d), got '${values['expires-in']}'`);
    const rate = values['rate-limit'] === undefined ? 0 : Number(values['rate-limit']);
    if (!Number.isSafeInteger(rate) || rate < 0) throw new UsageError(`--rate-limit takes requests per hour, got '${values['rate-limit']}'`);
    return withRemote(values, io, async ({ grpc, output }) => {
      const key = await grpc().createKey(
        { name: values.name ?? '', roles: values.role, expires_in: Math.ceil(expiresMs / 1000), rate_limit_per_hour: rate },
        { timeoutMs: CALL_TIMEOUT_MS },
      );
      printIssued(io, output, key);
      return EXIT.ok;
    });
  },
});
