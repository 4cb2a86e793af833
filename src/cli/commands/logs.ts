/**
 * `svc logs AGENT [-f]`: the agent's own log lines (what it wrote to fd 2),
 * as the server keeps them; with --follow, then each new line until Ctrl-C
 * or the end of the stream.
 */
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { remoteError } from '../../api/grpc/grpc-client.js';
import type { AgentLogLine } from '../../agents/agent-service-types.js';
import { defineCommand, UsageError } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { OUTPUT_FLAG, renderStreamed } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote, type Remote } from '../remote.js';

const lineOf = (entry: AgentLogLine): string => `${entry.time}  ${entry.line}\n`;

/** Follows from now on; the kept lines were printed before, so a line may show twice at the seam but none is missed. */
function follow(remote: Remote, agentId: string): Promise<number> {
  const { io, output } = remote;
  const call = remote.grpc().followLogs(agentId);
  let stoppedByUs = false;
  const stopListening = io.onInterrupt(() => {
    stoppedByUs = true;
    call.cancel();
  });
  return new Promise<number>((resolve, reject) => {
    const finish = (outcome: number | ServiceError): void => {
      stopListening();
      if (typeof outcome === 'number') resolve(outcome);
      else reject(remoteError(outcome));
    };
    call.on('metadata', () => io.err(`svc: following the log of ${agentId} (Ctrl-C stops)\n`));
    call.on('data', (entry: AgentLogLine) => {
      if (!stoppedByUs) io.out(renderStreamed(output, entry, () => lineOf(entry)));
    });
    call.on('error', (error: ServiceError) => finish(stoppedByUs && error.code === GrpcStatus.CANCELLED ? EXIT.ok : error));
    call.on('end', () => finish(EXIT.ok));
  });
}

export const logsCommand = defineCommand({
  path: ['logs'],
  summary: "Print an agent's own log lines; -f follows new ones.",
  description: `The lines the agent wrote to fd 2 (the SDK's log()), oldest first, as the server keeps them: the latest
runtime.agent_log_buffer_size bytes per agent. -o json prints one JSON object per line.`,
  args: [{ name: 'AGENT', description: "The agent's id or name." }],
  flags: {
    follow: { type: 'boolean', short: 'f', description: 'Keep printing new lines until Ctrl-C.' },
    tail: { type: 'string', short: 'n', value: 'N', description: 'Only the last N kept lines (at most 1000).' },
    output: OUTPUT_FLAG,
    ...CONNECTION_FLAGS,
  },
  examples: [
    { description: "An agent's log", command: 'svc logs echo' },
    { description: 'The last 20 lines, then follow', command: 'svc logs "$id" -n 20 -f' },
  ],
  async run({ values, args: [agentId = ''], io }) {
    const tail = values.tail === undefined ? 0 : Number(values.tail);
    if (!Number.isInteger(tail) || tail < 0 || tail > 1000) throw new UsageError(`--tail takes a whole number up to 1000, got '${values.tail}'`);
    return withRemote(values, io, async (remote) => {
      const { lines } = await remote.grpc().logs(agentId, tail, { timeoutMs: CALL_TIMEOUT_MS });
      for (const entry of lines) io.out(renderStreamed(remote.output, entry, () => lineOf(entry)));
      return values.follow === true ? follow(remote, agentId) : EXIT.ok;
    });
  },
});
