/**
 * The host's agents as the router and the dispatcher see them on the message
 * path: a receiver found by its id or its name, whether it takes a message
 * now (its state, its mailbox, the server's memory), queuing it, and whether
 * an agent may send a message at all (its capabilities and the receiver's).
 */
import { context } from '@opentelemetry/api';
import type { Clock } from '../../supervisors/index.js';
import { PLATFORM_SENDER, type Message } from '../bus/message.js';
import { messageBytes } from '../bus/message-size.js';
import { agentHolds, MESSAGE_RECEIVE, MESSAGE_SEND, type SendPolicy } from '../security/send-policy.js';
import type { AgentRuntime } from './agent-runtime.js';
import type { SendCheck } from './dispatcher.js';
import type { MemoryGuard } from './memory-guard.js';
import type { MessageTrace } from './message-trace.js';
import type { Mailboxes } from './router.js';

export interface HostMailboxesOptions {
  /** The host's agents by id, and their ids by name. */
  agents: ReadonlyMap<string, AgentRuntime>;
  names: ReadonlyMap<string, string>;
  memory: MemoryGuard;
  clock: Clock;
  messageTrace: MessageTrace;
  /** The dispatcher's `ready`: the agent has a message to run. */
  ready(agent: AgentRuntime): void;
}

export interface HostMailboxes extends Mailboxes {
  /** A receiver may be named by its id or its name. */
  byIdOrName(receiver: string): AgentRuntime | undefined;
  /** Whether the agent may send and take messages inside a worker's batch: it holds both message capabilities, and memory is not short. */
  mayLend(agent: AgentRuntime): boolean;
}

const ALLOWED: SendCheck = { allowed: true };

export function createHostMailboxes(options: HostMailboxesOptions): HostMailboxes {
  const { agents, names, memory, clock, messageTrace, ready } = options;
  const byIdOrName = (receiver: string): AgentRuntime | undefined => agents.get(receiver) ?? agents.get(names.get(receiver) ?? '');
  // The router asks `refusal` then `enqueue` for the same receiver; remembering it saves a lookup per message.
  let lastLooked: AgentRuntime | undefined;
  return {
    byIdOrName,
    mayLend: (agent) => {
      const capabilities = agent.record.capabilities;
      return agentHolds(capabilities, MESSAGE_SEND) && agentHolds(capabilities, MESSAGE_RECEIVE) && memory.admit(0) === null;
    },
    refusal(message) {
      const agent = byIdOrName(message.receiver);
      lastLooked = agent;
      if (agent === undefined || !agent.accepting || ((agent.state === 'stopping' || agent.state === 'stopped') && !agent.restartRequested)) return undefined;
      if (agent.state === 'failed') return 'agent_failed';
      const bytes = messageBytes(message);
      return agent.mailboxRefusal(bytes) ?? memory.admit(bytes);
    },
    addressed: (receiver) => lastLooked?.id ?? receiver,
    enqueue(message) {
      const agent = lastLooked?.id === message.receiver ? lastLooked : agents.get(message.receiver)!;
      agent.enqueue(message, clock.now());
      // A hibernated agent wakes for this message: the wake (a transition, a log line) is part of its trace.
      if (agent.state === 'hibernated') context.with(messageTrace.messageContext(message), () => ready(agent));
      else ready(agent);
    },
  };
}

/** The dispatcher's check of an agent's send; a reply to the platform (to one of its failures) reaches nobody, so it is not a send to refuse. */
export function sendCheckOf(policy: SendPolicy, mailboxes: HostMailboxes): (agent: AgentRuntime, message: Message) => SendCheck {
  return (agent, message) =>
    message.receiver === PLATFORM_SENDER
      ? ALLOWED
      : policy.check({ sender: agent.id, senderCapabilities: agent.record.capabilities, receiver: message.receiver, receiverCapabilities: mailboxes.byIdOrName(message.receiver)?.record.capabilities });
}
