/**
 * `svc health`: the server's Health RPC. Exit 0 only when the server says
 * it is healthy, so `svc health` works as a readiness probe in scripts.
 */
import { EXIT } from './exit-codes.js';
import { healthLine, json } from './output.js';
import { CALL_TIMEOUT_MS, parseRemoteArgs, UsageError, withRemote } from './remote.js';

export const HEALTH_USAGE = `usage: svc health [--server HOST:PORT] [--output table|json] [--config FILE]
`;

export async function healthCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseRemoteArgs(args, {});
  if (positionals.length > 0) throw new UsageError('health takes no arguments');
  return withRemote(values, async ({ client, output, out }) => {
    const health = await client.health({ timeoutMs: CALL_TIMEOUT_MS });
    out(output === 'json' ? json(health) : healthLine(health));
    return health.status === 'healthy' ? EXIT.ok : EXIT.unavailable;
  });
}
