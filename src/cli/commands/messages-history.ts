/**
 * `svc messages history AGENT_ID`: the agent's recent messages, from the REST
 * gateway's plain `GET /api/v1/agents/{id}/messages` (the server keeps the
 * last ones of each agent; gRPC has no call for them).
 */
import type { ProtoMessage } from '../../api/grpc/grpc-translate.js';
import { PERFORMATIVES } from '../../bus/performatives.js';
import { defineCommand, UsageError } from '../command.js';
import { CONNECTION_FLAGS, HTTP_SERVER_FLAG } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { messageLine, messageWideLine, OUTPUT_FLAG, render } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';

const MESSAGE_TEXT_FIELDS = [
  'message_id', 'sender', 'receiver', 'message_type', 'content', 'conversation_id',
  'reply_with', 'in_reply_to', 'language', 'ontology', 'protocol', 'created_at',
] as const;

/** The REST form leaves out empty fields; the printed forms show every field, as gRPC gives them. */
function withDefaults(message: Partial<ProtoMessage>): ProtoMessage {
  const full = { metadata: message.metadata ?? {} } as ProtoMessage;
  for (const field of MESSAGE_TEXT_FIELDS) full[field] = message[field] ?? '';
  return full;
}

export const messagesHistoryCommand = defineCommand({
  path: ['messages', 'history'],
  summary: "Show an agent's recent messages, oldest first.",
  description: `The messages the agent received and sent most recently, as the server keeps them in memory
(runtime.message_history_size per agent, 100 by default, since it started). Read over REST: the address is --http-server, the context's
http_server, or the configured server.http_addr.`,
  args: [{ name: 'AGENT_ID', description: "The agent's id or name." }],
  flags: {
    type: { type: 'string', short: 't', value: 'PERFORMATIVE', multiple: true, suggestions: PERFORMATIVES, description: 'Only messages of this performative.' },
    limit: { type: 'string', short: 'n', value: 'N', description: 'Only the last N.' },
    output: OUTPUT_FLAG,
    'http-server': HTTP_SERVER_FLAG,
    ...CONNECTION_FLAGS,
  },
  examples: [
    { description: "An agent's conversation so far", command: 'svc messages history "$id"' },
    { description: 'Its last five replies, with their ids', command: 'svc messages history "$id" -t inform -n 5 -o wide' },
  ],
  async run({ values, args: [agentId = ''], io }) {
    const limit = values.limit === undefined ? undefined : Number(values.limit);
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) throw new UsageError(`--limit takes a positive integer, got '${values.limit}'`);
    const query = values.type.length === 0 ? '' : `?message_types=${values.type.map(encodeURIComponent).join(',')}`;
    return withRemote(values, io, async ({ rest, output }) => {
      const body = (await rest().getJson(`/api/v1/agents/${encodeURIComponent(agentId)}/messages${query}`, CALL_TIMEOUT_MS)) as { messages?: Array<Partial<ProtoMessage>> };
      const all = (body.messages ?? []).map(withDefaults);
      const messages = limit === undefined ? all : all.slice(-limit);
      const lines = (line: (m: ProtoMessage) => string) => () => messages.map(line).join('');
      io.out(render(output, { messages }, { table: lines(messageLine), wide: lines(messageWideLine) }));
      return EXIT.ok;
    });
  },
});
