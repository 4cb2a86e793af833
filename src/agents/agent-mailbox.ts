/**
 * An agent's mailbox: the messages waiting for it, their arrival times and
 * bytes, counted against the agent's limits and the instance-wide budget
 * (memory-guard.ts). The agent (agent-runtime.ts) extends this.
 */
import type { Message } from '../bus/message.js';
import { messageBytes } from '../bus/message-size.js';
import { createRingBuffer, type RingBuffer } from '../bus/ring-buffer.js';
import { DispatchState } from './dispatch-state.js';
import type { MemoryGuard } from './memory-guard.js';

export class AgentMailbox extends DispatchState {
  readonly mailbox: RingBuffer<Message>;
  /** `clock.now()` when each mailbox message was accepted, in step with `mailbox`, for the processing time. */
  readonly arrivals: RingBuffer<number>;
  /** Bytes of the messages in `mailbox` (message-size.ts). */
  mailboxBytes = 0;

  constructor(
    size: number,
    /** `runtime.mailbox_bytes`. */
    private readonly bytesLimit: number,
    private readonly memory: MemoryGuard,
  ) {
    super();
    this.mailbox = createRingBuffer<Message>(size);
    this.arrivals = createRingBuffer<number>(size);
  }

  /**
   * Why the mailbox cannot take `bytes` more: full by count or by bytes. An
   * empty mailbox takes any one message the API admitted, so no message is
   * refused forever.
   */
  mailboxRefusal(bytes: number): 'mailbox_full' | null {
    if (this.mailbox.length >= this.mailbox.capacity) return 'mailbox_full';
    return this.mailbox.length > 0 && this.mailboxBytes + bytes > this.bytesLimit ? 'mailbox_full' : null;
  }

  /** Queues a message the router accepted; `now` is its arrival time. */
  enqueue(message: Message, now: number): void {
    const bytes = messageBytes(message);
    this.mailbox.push(message);
    this.arrivals.push(now);
    this.mailboxBytes += bytes;
    this.memory.queued(bytes);
  }

  /** The oldest waiting message, taken out of the mailbox and its bytes out of both budgets. */
  takeMessage(): Message | undefined {
    const message = this.mailbox.shift();
    if (message !== undefined) {
      const bytes = messageBytes(message);
      this.mailboxBytes -= bytes;
      this.memory.released(bytes);
    }
    return message;
  }

  /** Empties the mailbox (the agent is gone), giving its bytes back. */
  protected clearMailbox(): void {
    this.mailbox.clear();
    this.arrivals.clear();
    this.memory.released(this.mailboxBytes);
    this.mailboxBytes = 0;
  }
}
