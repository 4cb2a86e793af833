/**
 * `svc messages tail`: follows live messages over the SubscribeMessages
 * stream until Ctrl-C, `--count` messages, or the end of the stream (exit 0
 * for all three). A notice goes to stderr once the server has confirmed the
 * subscription, so whatever is sent after it shows.
 */
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { remoteError } from '../../api/grpc/grpc-client.js';
import type { ProtoMessage } from '../../api/grpc/grpc-translate.js';
import { PERFORMATIVES } from '../../bus/performatives.js';
import { defineCommand, UsageError } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { messageLine, messageWideLine, OUTPUT_FLAG, renderStreamed } from '../output.js';
import { withRemote, type Remote } from '../remote.js';

function follow(remote: Remote, filter: { agent_id: string; message_types: string[] }, count: number | undefined): Promise<number> {
  const { io, output } = remote;
  const call = remote.grpc().subscribe(filter);
  let seen = 0;
  let stoppedByUs = false;
  const stop = (): void => {
    stoppedByUs = true;
    call.cancel();
  };
  const stopListening = io.onInterrupt(stop);
  return new Promise<number>((resolve, reject) => {
    const finish = (outcome: number | ServiceError): void => {
      stopListening();
      if (typeof outcome === 'number') resolve(outcome);
      else reject(remoteError(outcome));
    };
    call.on('metadata', () => io.err(`svc: following messages${filter.agent_id ? ` of ${filter.agent_id}` : ''} (Ctrl-C stops)\n`));
    call.on('data', (message: ProtoMessage) => {
      if (stoppedByUs) return;
      io.out(renderStreamed(output, message, () => (output === 'wide' ? messageWideLine(message) : messageLine(message))));
      if (count !== undefined && ++seen >= count) stop();
    });
    call.on('error', (error: ServiceError) => finish(stoppedByUs && error.code === GrpcStatus.CANCELLED ? EXIT.ok : error));
    call.on('end', () => finish(EXIT.ok));
  });
}

export const messagesTailCommand = defineCommand({
  path: ['messages', 'tail'],
  summary: 'Follow live messages, of every agent or of one.',
  description: `Prints each message as the server accepts it, until Ctrl-C, --count messages or the end of the stream.
-o json prints one JSON object per line; -o wide adds the message id, conversation and in_reply_to.`,
  args: [],
  flags: {
    agent: { type: 'string', short: 'a', value: 'AGENT_ID', description: 'Only the messages this agent (id or name) sends or receives; an agent that does not exist is NOT_FOUND (exit 5).' },
    type: { type: 'string', short: 't', value: 'PERFORMATIVE', multiple: true, suggestions: PERFORMATIVES, description: 'Only messages of this performative.' },
    count: { type: 'string', short: 'n', value: 'N', description: 'Stop after N messages.' },
    output: OUTPUT_FLAG,
    ...CONNECTION_FLAGS,
  },
  examples: [
    { description: 'Follow everything', command: 'svc messages tail' },
    { description: "An agent's next two messages, as JSON lines", command: 'svc messages tail --agent "$id" -n 2 -o json' },
    { description: 'Only proposals and refusals', command: 'svc messages tail -t propose -t refuse' },
  ],
  async run({ values, io }) {
    const count = values.count === undefined ? undefined : Number(values.count);
    if (count !== undefined && !(Number.isInteger(count) && count > 0)) throw new UsageError(`--count takes a positive integer, got '${values.count}'`);
    const filter = { agent_id: values.agent ?? '', message_types: values.type };
    return withRemote(values, io, (remote) => follow(remote, filter, count));
  },
});
