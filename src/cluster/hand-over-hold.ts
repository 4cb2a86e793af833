/**
 * Messages for an agent this node is handing over (SIGTERM, hand-over.ts):
 * from the moment its state is taken until the other node acknowledges it,
 * the agent takes no messages here and runs nowhere yet. They are held, in
 * the order they came, and go on to the new node once it acknowledged; the
 * sender hears that node's outcome. Messages that still reach this node
 * afterwards (from a node that has not heard of the move yet) go straight
 * on to the new node, until this node has left. What finds the hold full
 * (`MAX_HELD_MESSAGES`) is refused at once (`mailbox_full`), and what is
 * still held after `HOLD_TIMEOUT_MS`, or when the hand-over fails, is
 * refused (`unknown_receiver`), as a message to an unknown agent is.
 */
import type { Clock, TimerHandle } from '../../supervisors/clock.js';
import type { RouteOutcome } from '../agents/router.js';
import type { Message } from '../bus/message.js';

/** Messages held per agent at most: about a mailbox's worth. */
export const MAX_HELD_MESSAGES = 1_024;
/**
 * A held message is refused after this: below a node-to-node call's own
 * deadline (5 s), so another node that forwarded it hears the refusal rather
 * than a timeout.
 */
export const HOLD_TIMEOUT_MS = 4_000;

export interface HandOverHold {
  /** Messages for `agentId` are held from now on. */
  begin(agentId: string): void;
  /** Whether messages for `agentId` are held now. */
  holds(agentId: string): boolean;
  /** Holds a message for an agent `holds`; settles with its outcome once the hand-over ends. */
  hold(message: Message): Promise<RouteOutcome>;
  /** The hand-over is acknowledged: every held message goes on through `send`, in order, and so does every later one. */
  release(agentId: string, send: (message: Message) => Promise<RouteOutcome>): void;
  /** The hand-over failed: every held message is refused with `detail`. */
  refuse(agentId: string, detail: string): void;
}

interface Held {
  readonly message: Message;
  readonly settle: (outcome: RouteOutcome) => void;
  readonly timer: TimerHandle;
}

type Send = (message: Message) => Promise<RouteOutcome>;

const sendOn = (send: Send, message: Message): Promise<RouteOutcome> =>
  send(message).catch((error: unknown) => ({ ok: false, reason: 'unknown_receiver', detail: `could not be sent on: ${String(error)}` }));

export function createHandOverHold(clock: Clock): HandOverHold {
  const held = new Map<string, Held[]>();
  /** Agents handed over, and how their messages reach the node that took them. */
  const moved = new Map<string, Send>();

  function take(agentId: string): Held[] {
    const queue = held.get(agentId) ?? [];
    held.delete(agentId);
    for (const item of queue) clock.clearTimeout(item.timer);
    return queue;
  }

  return {
    begin(agentId) {
      moved.delete(agentId);
      if (!held.has(agentId)) held.set(agentId, []);
    },
    holds: (agentId) => held.has(agentId) || moved.has(agentId),
    hold(message) {
      const send = moved.get(message.receiver);
      if (send !== undefined) return sendOn(send, message);
      const queue = held.get(message.receiver);
      if (queue === undefined) return Promise.resolve({ ok: false, reason: 'unknown_receiver' });
      if (queue.length >= MAX_HELD_MESSAGES) {
        return Promise.resolve({ ok: false, reason: 'mailbox_full', detail: `agent ${message.receiver} is being handed over to another node and ${MAX_HELD_MESSAGES} messages already wait for it` });
      }
      return new Promise<RouteOutcome>((settle) => {
        const timer = clock.setTimeout(() => {
          const index = queue.findIndex((item) => item.message === message);
          if (index >= 0) queue.splice(index, 1);
          settle({ ok: false, reason: 'unknown_receiver', detail: `agent ${message.receiver} was being handed over to another node, which did not take it within ${HOLD_TIMEOUT_MS} ms` });
        }, HOLD_TIMEOUT_MS);
        queue.push({ message, settle, timer });
      });
    },
    release(agentId, send) {
      moved.set(agentId, send);
      for (const { message, settle } of take(agentId)) void sendOn(send, message).then(settle);
    },
    refuse(agentId, detail) {
      for (const { settle } of take(agentId)) settle({ ok: false, reason: 'unknown_receiver', detail });
    },
  };
}
