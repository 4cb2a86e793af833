/**
 * Where a message goes once it is sent: the seam between the bus and
 * delivery. A receiver is an agent's mailbox here, a client reading the bus,
 * or, in a cluster, an agent (or a client) on another node: the message is
 * forwarded there (`RemoteRoute`, over node-to-node gRPC), without agents or
 * the dispatcher knowing.
 *
 * A router accepts or refuses at once and never runs an agent itself: the
 * mailbox it hands a message to schedules the execution. On acceptance it
 * publishes the message as `sent`; a refused message is not sent, and the
 * caller answers its sender (an error to a client, a FIPA `failure` to an
 * agent).
 */
import type { MessageBus } from '../bus/bus.js';
import { PLATFORM_SENDER, type FailureReason, type Message } from '../bus/message.js';

export type RouteOutcome =
  /** `forwarded`: the message went to another node, which answers with its own outcome. */
  | { readonly ok: true; readonly forwarded?: Promise<RouteOutcome> }
  | { readonly ok: false; readonly reason: FailureReason; readonly detail?: string };

/** Messages for receivers on other nodes (remote-agents.ts). */
export interface RemoteRoute {
  forward(message: Message): Promise<RouteOutcome> | undefined;
}

/** An agent's message another node refused: its sender gets a FIPA `failure`, as for a local refusal. */
export type ForwardRefused = (message: Message, reason: FailureReason, detail?: string) => void;

export interface Router {
  /**
   * `published`: the message is already on the bus (a platform `failure`,
   * published by `reportFailure` when it was made), so it is not published
   * again as `sent`.
   */
  route(message: Message, published?: boolean): RouteOutcome;
}

/** The local agents' mailboxes, as the router sees them. */
export interface Mailboxes {
  /**
   * Whether the local agent `message.receiver` can take `message` now: `null`
   * when it can, the reason when it cannot, `undefined` when there is no such
   * agent.
   */
  refusal(message: Message): FailureReason | null | undefined;
  /**
   * The id of the agent `refusal` just accepted, when the message named it by
   * its name: the router writes it into `receiver` before the message is
   * published, so streams, history and the agent see the id.
   */
  addressed(receiver: string): string;
  /** Queues a message `refusal` accepted; the agent's dispatch is scheduled from there. */
  enqueue(message: Message): void;
}

/** Clients are reached through their subscriptions: for them, published is delivered. */
export const CLIENT_PREFIX = 'client:';

const ACCEPTED: RouteOutcome = { ok: true };
const UNKNOWN: RouteOutcome = { ok: false, reason: 'unknown_receiver' };
const REFUSED: Readonly<Record<FailureReason, RouteOutcome>> = {
  unknown_receiver: UNKNOWN,
  agent_failed: { ok: false, reason: 'agent_failed' },
  mailbox_full: { ok: false, reason: 'mailbox_full' },
  memory_pressure: { ok: false, reason: 'memory_pressure' },
  execution_crashed: { ok: false, reason: 'execution_crashed' },
  permission_denied: { ok: false, reason: 'permission_denied' },
};

/**
 * Clients' refusals are answered by the caller (AgentService throws), and a
 * platform failure is never answered, so only an agent's refused message
 * goes to `refused`.
 */
function watchForward(message: Message, forwarded: Promise<RouteOutcome>, refused: ForwardRefused | undefined): void {
  if (refused === undefined || message.sender.startsWith(CLIENT_PREFIX) || message.sender === PLATFORM_SENDER) return;
  void forwarded.then((outcome) => {
    if (!outcome.ok) refused(message, outcome.reason, outcome.detail);
  });
}

export function createLocalRouter(bus: MessageBus, mailboxes: Mailboxes, remote?: RemoteRoute, refused?: ForwardRefused): Router {
  return {
    route(message, published = false) {
      if (message.receiver.startsWith(CLIENT_PREFIX)) {
        if (!published) bus.publishMessage('sent', message);
        bus.publishMessage('delivered', message);
        // A client that sent through another node reads its replies there.
        void remote?.forward(message);
        return ACCEPTED;
      }
      const refusal = mailboxes.refusal(message);
      if (refusal === undefined) {
        const forwarded = remote?.forward(message);
        if (forwarded === undefined) return UNKNOWN;
        if (!published) bus.publishMessage('sent', message);
        watchForward(message, forwarded, refused);
        return { ok: true, forwarded };
      }
      if (refusal !== null) return REFUSED[refusal];
      const id = mailboxes.addressed(message.receiver);
      if (id !== message.receiver) message.receiver = id;
      // Published before it is queued: queuing may dispatch at once, and `sent` comes before `delivered`.
      if (!published) bus.publishMessage('sent', message);
      mailboxes.enqueue(message);
      return ACCEPTED;
    },
  };
}
