/**
 * `svc messages send AGENT_ID --type PERFORMATIVE`: queues a message for an
 * agent and prints its id; it returns when the message is accepted, not when
 * it is handled.
 */
import { PERFORMATIVES } from '../../bus/performatives.js';
import { defineCommand } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { OUTPUT_FLAG, render } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';

export const messagesSendCommand = defineCommand({
  path: ['messages', 'send'],
  summary: 'Send a FIPA-ACL message to an agent.',
  description: `Prints the new message's id once the server accepted it. The agent's replies go to the sender,
client:<you>: follow them with 'svc messages tail' or read them with 'svc messages history'.`,
  args: [{ name: 'AGENT_ID', description: "The receiving agent's id or name." }],
  flags: {
    type: { type: 'string', short: 't', value: 'PERFORMATIVE', required: true, suggestions: PERFORMATIVES, description: 'The FIPA performative: request, inform, cfp, query-ref, ...' },
    content: { type: 'string', short: 'c', value: 'TEXT', description: 'The content (default empty).' },
    conversation: { type: 'string', value: 'ID', description: 'The conversation id (default: a new one).' },
    'reply-with': { type: 'string', value: 'ID', description: "An id the agent's reply will carry in in_reply_to." },
    protocol: { type: 'string', value: 'NAME', description: 'The interaction protocol, e.g. fipa-request (not interpreted).' },
    output: OUTPUT_FLAG,
    ...CONNECTION_FLAGS,
  },
  examples: [
    { description: 'Ask the echo agent something', command: 'svc messages send "$id" --type request --content hello' },
    { description: 'Continue a conversation', command: 'svc messages send "$id" -t inform -c done --conversation c-42' },
  ],
  async run({ values, args: [receiver = ''], io }) {
    return withRemote(values, io, async ({ grpc, output }) => {
      const sent = await grpc().send(
        {
          receiver,
          message_type: values.type ?? '',
          content: values.content ?? '',
          conversation_id: values.conversation ?? '',
          reply_with: values['reply-with'] ?? '',
          protocol: values.protocol ?? '',
        },
        { timeoutMs: CALL_TIMEOUT_MS },
      );
      io.out(render(output, sent, { table: () => `${sent.message_id}\n` }));
      return EXIT.ok;
    });
  },
});
