/**
 * Worker-local delivery, the worker's side: a message an execution writes to
 * an agent hosted by the same worker runs there as a *hop*, appended to the
 * batch, instead of travelling to the main thread and back. The main thread
 * keeps its authority by deciding up front: it lends the batch the instances
 * that may take part (`BatchLoan`), and replays every hop's bookkeeping from
 * the answers, in order (dispatcher.ts).
 *
 * A message stays local only when all of these hold, else it goes to the main
 * thread as any other output line:
 * - its sender and its receiver are lent, and the receiver is *open*: no item
 *   of the batch still waits for it, no hop of it is queued, it did not crash;
 * - hops are left in the batch's budget;
 * - its trace is not sampled (with tracing on, it carries an unsampled
 *   `traceparent`): a sampled message gets its spans on the main thread.
 * A message to a lent receiver that goes to the main thread closes that
 * receiver for the rest of the batch, so a sender's messages to it keep their
 * order.
 *
 * The message is completed here as the main thread would (id, `created_at`,
 * conversation, the trace context of the message handled, the receiver named
 * by its id) and its JSON is what the receiver reads and what the main
 * thread replays.
 */
import { parseOutput, type IncomingMessage } from './abi.js';
import { completeMessage, type Message } from '../bus/message.js';
import { createIdGenerator } from '../bus/message-id.js';
import { TRACEPARENT, TRACESTATE } from '../telemetry/trace-context.js';
import type { BatchLoan, LocalSend } from './worker-protocol.js';

/** A hop: an execution of `agent` with `input`, appended to the batch. */
export interface Hop {
  agent: number;
  message: Message;
  input: Uint8Array;
}

const enum Standing {
  /** Waits for its own item in this batch. */
  Waiting,
  Open,
  /** A hop of it is queued or running. */
  Busy,
  Closed,
}

/** Whether `traceparent`'s flags (its last two hex digits) say sampled. */
const sampled = (traceparent: string): boolean => (Number.parseInt(traceparent.slice(-2), 16) & 1) === 1;

export interface LocalDelivery {
  /** Remembers the names an instance is reached by (its agent's id first, then its name). */
  name(agent: number, names: readonly string[]): void;
  forget(agent: number): void;
  /** Starts a batch: `agents` are the instances of its execution items, in order. */
  begin(loan: BatchLoan | null, agents: Iterable<number>): void;
  /**
   * After an execution of `agent` (item `item`) that handled `incoming` and wrote `stdout`: the
   * lines to deliver here, as hops queued at the end of the batch, and their sends.
   */
  route(item: number, agent: number, incoming: IncomingMessage | Uint8Array, stdout: readonly string[], alive: (agent: number) => boolean): LocalSend[];
  /** The hop at the head of the queue, taken. */
  nextHop(): Hop | undefined;
  /** The hop of `agent` ran (crashed when `crashed`). */
  ran(agent: number, crashed: boolean): void;
}

export function createLocalDelivery(): LocalDelivery {
  const byName = new Map<string, number>();
  const namesOf = new Map<number, readonly string[]>();
  const standing = new Map<number, Standing>();
  const waiting = new Map<number, number>();
  const hops: Hop[] = [];
  let hopsLeft = 0;
  let traced = false;
  const newId = createIdGenerator();
  const decoder = new TextDecoder();

  function receiverOf(message: { receiver: string }): number | undefined {
    const agent = byName.get(message.receiver);
    return agent !== undefined && standing.has(agent) ? agent : undefined;
  }

  return {
    name(agent, names) {
      namesOf.set(agent, names);
      for (const name of names) byName.set(name, agent);
    },

    forget(agent) {
      for (const name of namesOf.get(agent) ?? []) if (byName.get(name) === agent) byName.delete(name);
      namesOf.delete(agent);
    },

    begin(loan, agents) {
      standing.clear();
      waiting.clear();
      hops.length = 0;
      hopsLeft = loan?.hops ?? 0;
      traced = loan?.traced ?? false;
      if (loan === null) return;
      for (const agent of loan.agents) standing.set(agent, Standing.Open);
      for (const agent of agents) {
        if (!standing.has(agent)) continue;
        standing.set(agent, Standing.Waiting);
        waiting.set(agent, (waiting.get(agent) ?? 0) + 1);
      }
    },

    route(item, agent, incoming, stdout, alive) {
      const own = standing.get(agent);
      if (own === Standing.Waiting) {
        const left = waiting.get(agent)! - 1;
        waiting.set(agent, left);
        if (left === 0) standing.set(agent, Standing.Open);
      }
      if (own === undefined || stdout.length === 0 || !alive(agent)) return [];
      const handled: IncomingMessage = incoming instanceof Uint8Array ? (JSON.parse(decoder.decode(incoming)) as IncomingMessage) : incoming;
      const sends: LocalSend[] = [];
      const senderId = namesOf.get(agent)?.[0];
      if (senderId === undefined) return [];
      // Lines are parsed one at a time so each message knows its line; blank and bad lines stay the main thread's.
      for (let line = 0; line < stdout.length; line++) {
        const { messages } = parseOutput([stdout[line]!], handled, senderId);
        const draft = messages[0];
        if (draft === undefined) continue;
        const receiver = receiverOf(draft);
        if (receiver === undefined) continue;
        const open = standing.get(receiver) === Standing.Open && alive(receiver);
        const traceparent = handled.metadata?.[TRACEPARENT];
        const untraced = !traced || (traceparent !== undefined && !sampled(traceparent));
        if (!open || hopsLeft === 0 || !untraced) {
          standing.set(receiver, Standing.Closed);
          continue;
        }
        const message = completeMessage(draft, { newId });
        const metadata = message.metadata;
        if (metadata[TRACEPARENT] !== undefined) delete metadata[TRACEPARENT];
        if (metadata[TRACESTATE] !== undefined) delete metadata[TRACESTATE];
        if (traceparent !== undefined) metadata[TRACEPARENT] = traceparent;
        const tracestate = handled.metadata?.[TRACESTATE];
        if (tracestate !== undefined) metadata[TRACESTATE] = tracestate;
        message.receiver = namesOf.get(receiver)![0]!;
        const json = JSON.stringify(message);
        hopsLeft -= 1;
        standing.set(receiver, Standing.Busy);
        hops.push({ agent: receiver, message, input: Buffer.from(json, 'utf8') });
        sends.push([item, line, receiver, json]);
      }
      return sends;
    },

    nextHop: () => hops.shift(),

    ran(agent, crashed) {
      standing.set(agent, crashed ? Standing.Closed : Standing.Open);
    },
  };
}
