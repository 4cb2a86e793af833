/**
 * `svc call AGENT --type PERFORMATIVE`: request/reply through CallAgent.
 * Sends the message, waits for the agent's reply (correlated by the server)
 * and prints it; the platform's `failure`, when the agent crashed on the
 * message, is printed the same way and exits 1.
 */
import { PERFORMATIVES } from '../../bus/performatives.js';
import { parseDuration } from '../../config/units.js';
import { defineCommand, UsageError } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { messageLine, OUTPUT_FLAG, render } from '../output.js';
import { withRemote } from '../remote.js';

/** The server's own default wait, CallAgent's timeout_ms 0. */
const DEFAULT_TIMEOUT_MS = 30_000;
/** Beyond the wait, the time the call itself may take on the wire. */
const CALL_MARGIN_MS = 5_000;

export const callCommand = defineCommand({
  path: ['call'],
  summary: "Send a message to an agent and print its reply.",
  description: `The reply is the message the agent sends back to you in the same conversation, in reply to this one
(in_reply_to). If the agent fails on the message, the platform's failure message is the reply and the exit code is 1.
No reply within --timeout: DEADLINE_EXCEEDED, exit 6.`,
  args: [{ name: 'AGENT', description: "The receiving agent's id or name." }],
  flags: {
    type: { type: 'string', short: 't', value: 'PERFORMATIVE', required: true, suggestions: PERFORMATIVES, description: 'The FIPA performative: request, query-ref, cfp, ...' },
    content: { type: 'string', short: 'c', value: 'TEXT', description: 'The content (default empty).' },
    timeout: { type: 'string', value: 'DURATION', description: 'How long to wait for the reply (default 30s, at most 10m).' },
    conversation: { type: 'string', value: 'ID', description: 'The conversation id (default: a new one).' },
    protocol: { type: 'string', value: 'NAME', description: 'The interaction protocol, e.g. fipa-request (not interpreted).' },
    output: OUTPUT_FLAG,
    ...CONNECTION_FLAGS,
  },
  examples: [
    { description: 'Ask the echo agent and print its answer', command: 'svc call echo --type request --content hello' },
    { description: 'Wait at most five seconds, read the content', command: 'svc call "$id" -t query-ref -c price --timeout 5s -o json | jq -r .content' },
  ],
  async run({ values, args: [receiver = ''], io }) {
    const timeoutMs = values.timeout === undefined ? 0 : parseDuration(values.timeout);
    if (timeoutMs === undefined || timeoutMs > 600_000) throw new UsageError(`--timeout takes a duration up to 10m (500ms, 5s, 2m), got '${values.timeout}'`);
    return withRemote(values, io, async ({ grpc, output }) => {
      const reply = await grpc().call(
        {
          receiver,
          message_type: values.type ?? '',
          content: values.content ?? '',
          conversation_id: values.conversation ?? '',
          protocol: values.protocol ?? '',
        },
        timeoutMs,
        { timeoutMs: (timeoutMs === 0 ? DEFAULT_TIMEOUT_MS : timeoutMs) + CALL_MARGIN_MS },
      );
      io.out(render(output, reply, { table: () => messageLine(reply) }));
      return reply.sender === 'platform' && reply.message_type === 'failure' ? EXIT.failure : EXIT.ok;
    });
  },
});
