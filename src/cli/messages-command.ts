/**
 * `svc messages send|tail`.
 */
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { remoteError } from '../api/grpc/grpc-client.js';
import type { ProtoMessage } from '../api/grpc/grpc-translate.js';
import { EXIT } from './exit-codes.js';
import { json, messageLine } from './output.js';
import { CALL_TIMEOUT_MS, exactlyOne, parseRemoteArgs, UsageError, withRemote, type Remote } from './remote.js';

export const MESSAGES_USAGE = `usage:
  svc messages send AGENT_ID --type PERFORMATIVE [--content TEXT] [--conversation ID]
  svc messages tail [--agent AGENT_ID] [--type PERFORMATIVE]... [--count N]
options: --server HOST:PORT  --output table|json  --config FILE
`;

async function send(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseRemoteArgs(args, {
    type: { type: 'string' },
    content: { type: 'string' },
    conversation: { type: 'string' },
  });
  const receiver = exactlyOne(positionals, 'receiving agent id');
  if (values.type === undefined) throw new UsageError('--type is required (a FIPA performative such as inform or request)');
  return withRemote(values, async ({ client, output, out }) => {
    const { message_id } = await client.send(
      { receiver, message_type: values.type ?? '', content: values.content ?? '', conversation_id: values.conversation ?? '' },
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    out(output === 'json' ? json({ message_id }) : `${message_id}\n`);
    return EXIT.ok;
  });
}

/**
 * Streams until the server ends the stream, `--count` messages arrived, or
 * SIGINT/SIGTERM (exit 0 for all three). A notice goes to stderr once the
 * server has confirmed the subscription, so whatever is sent after it shows.
 */
function follow(remote: Remote, filter: { agent_id: string; message_types: string[] }, count: number | undefined): Promise<number> {
  const { client, output, out, err } = remote;
  const call = client.subscribe(filter);
  let seen = 0;
  let stoppedByUs = false;
  const stop = (): void => {
    stoppedByUs = true;
    call.cancel();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return new Promise<number>((resolve, reject) => {
    const finish = (outcome: number | ServiceError): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      if (typeof outcome === 'number') resolve(outcome);
      else reject(remoteError(outcome));
    };
    call.on('metadata', () => err(`svc: following messages${filter.agent_id ? ` of ${filter.agent_id}` : ''} (Ctrl-C stops)\n`));
    call.on('data', (message: ProtoMessage) => {
      if (stoppedByUs) return;
      out(output === 'json' ? `${JSON.stringify(message)}\n` : messageLine(message));
      if (count !== undefined && ++seen >= count) stop();
    });
    call.on('error', (error: ServiceError) => finish(stoppedByUs && error.code === GrpcStatus.CANCELLED ? EXIT.ok : error));
    call.on('end', () => finish(EXIT.ok));
  });
}

async function tail(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseRemoteArgs(args, {
    agent: { type: 'string' },
    type: { type: 'string', multiple: true },
    count: { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError('tail takes no arguments (use --agent)');
  const count = values.count === undefined ? undefined : Number(values.count);
  if (count !== undefined && !(Number.isInteger(count) && count > 0)) throw new UsageError(`--count takes a positive integer, got '${values.count}'`);
  const filter = { agent_id: values.agent ?? '', message_types: values.type ?? [] };
  return withRemote(values, (remote) => follow(remote, filter, count));
}

export function messagesCommand(args: readonly string[]): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'send':
      return send(rest);
    case 'tail':
      return tail(rest);
    default:
      throw new UsageError(sub === undefined ? 'messages needs a subcommand' : `unknown messages subcommand '${sub}'`);
  }
}
