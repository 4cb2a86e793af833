/**
 * Pure translations between the proto shapes grpc-js hands us (snake_case,
 * proto3 defaults filled in, 64-bit integers as numbers) and the shapes of
 * `AgentService`. Validation is the service's job: these only undo what the
 * wire format forces (absent sub-messages arrive as `null`, absent strings
 * as `''`, `content` is text).
 */
import type { DeployAgentRequest, ListAgentsRequest } from '../../agents/agent-service-types.js';
import type { BusEvent } from '../../bus/events.js';
import type { Message } from '../../bus/message.js';

export interface ProtoResources {
  memory_limit: number;
  cpu_shares: number;
}

export interface ProtoDeployAgentRequest {
  name: string;
  wasm_module: Uint8Array;
  capabilities: string[];
  resources: ProtoResources | null;
}

export interface ProtoListAgentsRequest {
  page_size: number;
  page_token: string;
}

/** `svc.v1.Message`: every field present, `content` as text. */
export interface ProtoMessage {
  message_id: string;
  sender: string;
  receiver: string;
  message_type: string;
  content: string;
  conversation_id: string;
  reply_with: string;
  in_reply_to: string;
  language: string;
  ontology: string;
  protocol: string;
  metadata: Record<string, string>;
  created_at: string;
}

export function deployRequestFrom(request: ProtoDeployAgentRequest): DeployAgentRequest {
  return {
    name: request.name,
    wasm_module: request.wasm_module,
    capabilities: request.capabilities,
    resources: { memory_limit: request.resources?.memory_limit ?? 0, cpu_shares: request.resources?.cpu_shares ?? 0 },
  };
}

/** proto3 cannot tell 0 from unset, so 0 and `''` mean "the server's default". */
export function listRequestFrom(request: ProtoListAgentsRequest): ListAgentsRequest {
  const out: ListAgentsRequest = {};
  if (request.page_size !== 0) out.page_size = request.page_size;
  if (request.page_token !== '') out.page_token = request.page_token;
  return out;
}

/** The bus carries any JSON value as `content`; the proto carries text, so non-strings travel as their JSON text. */
export function contentToText(content: unknown): string {
  if (content === undefined || content === null) return '';
  return typeof content === 'string' ? content : JSON.stringify(content);
}

export function messageToProto(message: Message): ProtoMessage {
  return {
    message_id: message.message_id,
    sender: message.sender,
    receiver: message.receiver,
    message_type: message.message_type,
    content: contentToText(message.content),
    conversation_id: message.conversation_id,
    reply_with: message.reply_with ?? '',
    in_reply_to: message.in_reply_to ?? '',
    language: message.language ?? '',
    ontology: message.ontology ?? '',
    protocol: message.protocol ?? '',
    metadata: message.metadata,
    created_at: message.created_at,
  };
}

/**
 * Which bus events a `SubscribeMessages` stream carries: each message once.
 * A message that arrives is on the bus twice (`sent`, then `delivered`), so
 * `delivered` is skipped; lifecycle events have no `Message` form.
 */
export function streamedMessage(event: BusEvent): Message | undefined {
  return event.kind === 'message' && event.direction !== 'delivered' ? event.message : undefined;
}
