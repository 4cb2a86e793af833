/**
 * A stream filtered by one agent (`SubscribeMessages` with `agent_id`, the
 * agent's WebSocket), wherever the agent runs: this node's bus while it
 * hosts the agent, the events the hosting node publishes
 * (`RemoteAgents.follow`) while another node does. So a stream on any node
 * sees what a stream on the agent's own node sees, in that node's order, and
 * goes on seeing it after the agent moves.
 *
 * What this node publishes itself about an agent hosted elsewhere (a message
 * it forwarded there, a reply it received from it) is the owner's event too:
 * the owner's copy is the one streamed, so each message comes once and in the
 * owner's order. When the agent moves between this node and another, both
 * sources may carry one message for a moment: a message is streamed once per
 * direction, by its `message_id`.
 */
import { Observable, type OperatorFunction } from 'rxjs';
import type { BoundedSink } from '../bus/bounded-sink.js';
import type { BusEvent } from '../bus/events.js';
import { compileFilter, type BusFilter } from '../bus/filter.js';
import { lifecycleMessage } from '../bus/lifecycle-message.js';
import type { IdGenerator } from '../bus/message-id.js';
import type { AgentHost } from './agent-host.js';
import type { RemoteAgents } from './remote-agents.js';

/** Message ids remembered per stream to drop the second copy of a message while an agent moves. */
export const RECENT_MESSAGE_IDS = 1_024;

/** The last `limit` keys seen; the oldest is forgotten first. */
function recentKeys(limit: number): (key: string) => boolean {
  const seen = new Set<string>();
  const order: string[] = [];
  return (key) => {
    if (seen.has(key)) return false;
    seen.add(key);
    order.push(key);
    if (order.length > limit) seen.delete(order.shift() as string);
    return true;
  };
}

/**
 * Passes this node's events while `hostedHere`, and the events of `remote`
 * that `filter` matches; each message once per direction.
 */
export function followAgent(remote: Observable<BusEvent>, hostedHere: () => boolean, filter: BusFilter): OperatorFunction<BusEvent, BusEvent> {
  const matches = compileFilter(filter);
  return (local) =>
    new Observable<BusEvent>((subscriber) => {
      const first = recentKeys(RECENT_MESSAGE_IDS);
      const pass = (event: BusEvent): void => {
        if (event.kind === 'message' && !first(`${event.direction} ${event.message.message_id}`)) return;
        subscriber.next(event);
      };
      const fromHere = local.subscribe({
        next: (event) => {
          if (hostedHere()) pass(event);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      const fromOwner = remote.subscribe({
        next: (event) => {
          if (matches(event)) pass(event);
        },
        error: (error: unknown) => subscriber.error(error),
      });
      return () => {
        fromHere.unsubscribe();
        fromOwner.unsubscribe();
      };
    });
}

export interface AgentStreamOptions {
  readonly remote: RemoteAgents | undefined;
  readonly newId: IdGenerator;
  readonly buffer: { bufferSize: number; bufferBytes: number };
}

/** The stream of `agentId` (known to exist), through `write`, bounded as every stream is. */
export function connectAgentStream(host: AgentHost, filter: BusFilter & { agent_id: string }, write: (event: BusEvent) => void | Promise<unknown>, options: AgentStreamOptions): BoundedSink {
  const id = filter.agent_id;
  // Streams carry messages only: the agent's lifecycle reaches its watchers as the platform's `inform`.
  const asMessage = (event: BusEvent): BusEvent =>
    event.kind === 'lifecycle' ? { kind: 'message', direction: 'platform', message: lifecycleMessage(event, { newId: options.newId }) } : event;
  const through = options.remote === undefined ? undefined : followAgent(options.remote.follow(id), () => host.get(id) !== undefined, filter);
  return host.bus.connect(filter, (event) => write(asMessage(event)), { ...options.buffer, ...(through === undefined ? {} : { through }) });
}
