/**
 * Request/reply over the bus (`CallAgent`): waits for the message that
 * answers a client's message, correlated as the ABI defaults a reply: sent
 * to the caller (`client:<principal>`), in the same conversation, with
 * `in_reply_to` the request's `reply_with`, else its `message_id`. The
 * platform's FIPA `failure` for a request that could not be handled is such
 * a message too, so a crash answers the call at once.
 *
 * Subscribed before the request is routed: an agent may answer before the
 * router returns. The timeout runs on the injected clock.
 */
import type { MessageBus } from '../bus/bus.js';
import type { Message } from '../bus/message.js';
import { SvcError } from '../errors/svc-error.js';
import type { Clock } from '../../supervisors/index.js';

export interface ReplyWaiter {
  /** The reply, or DEADLINE_EXCEEDED once `timeoutMs` passed without one. */
  readonly reply: Promise<Message>;
  /** Stops waiting (the request was refused); `reply` then never settles. */
  cancel(): void;
}

export function waitForReply(bus: MessageBus, clock: Clock, request: Message, timeoutMs: number): ReplyWaiter {
  const expected = request.reply_with ?? request.message_id;
  let settle: { resolve(message: Message): void; reject(error: SvcError): void } | undefined;
  const reply = new Promise<Message>((resolve, reject) => (settle = { resolve, reject }));
  const timer = clock.setTimeout(() => {
    done();
    settle?.reject(
      new SvcError('DEADLINE_EXCEEDED', `no reply from ${request.receiver} within ${timeoutMs} ms`, {
        agent_id: request.receiver,
        message_id: request.message_id,
        conversation_id: request.conversation_id,
        timeout_ms: String(timeoutMs),
      }),
    );
  }, timeoutMs);
  // Filtered on the client: a subscription to every agent would have every message published for it.
  const subscription = bus.subscribe({ agent_id: request.sender }).subscribe((event) => {
    if (event.kind !== 'message' || event.direction === 'sent') return;
    const { message } = event;
    if (message.receiver !== request.sender || message.in_reply_to !== expected || message.conversation_id !== request.conversation_id) return;
    done();
    settle?.resolve(message);
  });
  function done(): void {
    subscription.unsubscribe();
    clock.clearTimeout(timer);
  }
  return { reply, cancel: done };
}
