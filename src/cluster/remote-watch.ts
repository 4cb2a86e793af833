/**
 * Streams that follow an agent hosted on another node (docs/cluster.md,
 * "Streams that follow an agent"): one `Watch` call per followed agent and
 * node, shared by every local subscriber of that agent, opened with the
 * first and cancelled with the last. The call goes to the node the registry
 * names as the agent's owner, and moves when the owner changes (a failover,
 * a hand-over) or the call ends (its node died, restarted, or stopped): it
 * is opened again, with a growing delay while the owner cannot be reached.
 * While this node hosts the agent itself no call is open: its own bus has
 * the events.
 *
 * Events received here reach the followers only: they are not published on
 * this node's bus, so history, counters and other streams never see them
 * twice, and a node never forwards what it received from a watch.
 */
import { status, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { Observable, type Subscriber } from 'rxjs';
import type { Clock, TimerHandle } from '../../supervisors/clock.js';
import { errorFromStatus } from '../api/grpc/grpc-errors.js';
import type { BusEvent } from '../bus/events.js';
import { SvcError } from '../errors/svc-error.js';
import type { Logger } from '../telemetry/logger.js';
import type { NodeClients, NodeRef } from './node-clients.js';
import { decodeWatchEvent, type WatchEventProto } from './watch-event.js';

/** The first wait before a watch is opened again; it doubles up to `MAX_RETRY_MS` and resets once a watch is in place. */
export const FIRST_RETRY_MS = 100;
/** A dead owner is tried this often at most, until the registry names another. */
export const MAX_RETRY_MS = 2_000;

export interface RemoteWatchOptions {
  readonly nodeId: string;
  /** The node hosting the agent now, as the registry says; undefined when none does (undeployed, unknown). */
  readonly ownerOf: (agentId: string) => string | undefined;
  /** A member this node can call now; undefined when it cannot (dead, left, no gRPC address). */
  readonly reachable: (nodeId: string) => NodeRef | undefined;
  readonly clients: Pick<NodeClients, 'watch'>;
  readonly clock: Clock;
  readonly log: Logger;
}

export interface RemoteWatches {
  /** The events of `agentId` published by the other node hosting it, for as long as the subscription lasts. */
  follow(agentId: string): Observable<BusEvent>;
  /** The registry's entry of the agent changed: its watch moves if its owner did. */
  ownerChanged(agentId: string): void;
  /** Watch calls in place now (the owner answered), by agent id and the node each goes to. */
  open(): Map<string, string>;
  /** Ends every follower and cancels every watch. */
  close(): void;
}

interface Followed {
  readonly agentId: string;
  readonly followers: Set<Subscriber<BusEvent>>;
  /** The node the open call goes to. */
  target: string | undefined;
  call: ClientReadableStream<WatchEventProto> | undefined;
  /** The owner answered the open call: its subscription is in place. */
  answered: boolean;
  retry: TimerHandle | undefined;
  delayMs: number;
}

const isSlowConsumer = (error: ServiceError): boolean => error.code === status.RESOURCE_EXHAUSTED && errorFromStatus(error).metadata?.['reason'] === 'slow_consumer';

export function createRemoteWatches(options: RemoteWatchOptions): RemoteWatches {
  const { clock, log } = options;
  const followed = new Map<string, Followed>();
  let closed = false;

  function cancel(entry: Followed): void {
    const { call } = entry;
    entry.call = undefined;
    entry.target = undefined;
    entry.answered = false;
    call?.cancel();
  }

  function later(entry: Followed): void {
    if (entry.retry !== undefined || closed) return;
    const delay = entry.delayMs;
    entry.delayMs = Math.min(entry.delayMs * 2, MAX_RETRY_MS);
    entry.retry = clock.setTimeout(() => {
      entry.retry = undefined;
      attach(entry);
    }, delay);
  }

  /** Opens the watch to the agent's owner now, unless it is open there already or this node hosts the agent. */
  function attach(entry: Followed): void {
    if (closed || followed.get(entry.agentId) !== entry) return;
    const owner = options.ownerOf(entry.agentId);
    if (entry.call !== undefined && entry.target === owner) return;
    cancel(entry);
    // Here, or nowhere: the registry's next change of the entry brings it back.
    if (owner === undefined || owner === options.nodeId) return;
    const node = options.reachable(owner);
    if (node === undefined) {
      later(entry);
      return;
    }
    const call = options.clients.watch(node, entry.agentId);
    entry.call = call;
    entry.target = owner;
    const current = () => entry.call === call;
    call.on('metadata', () => {
      if (!current()) return;
      entry.delayMs = FIRST_RETRY_MS;
      entry.answered = true;
    });
    call.on('data', (proto: WatchEventProto) => {
      if (!current()) return;
      const event = decodeWatchEvent(proto);
      if (event === undefined) {
        log.warn({ agent_id: entry.agentId, node_id: owner }, 'a watched node sent an event this node cannot read; skipped');
        return;
      }
      for (const follower of entry.followers) follower.next(event);
    });
    call.on('error', (error: ServiceError) => {
      if (!current()) return;
      cancel(entry);
      if (!isSlowConsumer(error)) {
        later(entry);
        return;
      }
      // This node fell behind the owner's buffer: its followers missed events, so they end as a slow local stream does.
      const body = errorFromStatus(error);
      const failure = new SvcError(body.code, `the stream of agent ${entry.agentId} on node ${owner} fell behind: ${body.message}`, body.metadata);
      for (const follower of [...entry.followers]) follower.error(failure);
    });
    call.on('end', () => {
      if (!current()) return;
      cancel(entry);
      later(entry);
    });
  }

  function release(entry: Followed, follower: Subscriber<BusEvent>): void {
    entry.followers.delete(follower);
    if (entry.followers.size > 0 || followed.get(entry.agentId) !== entry) return;
    followed.delete(entry.agentId);
    if (entry.retry !== undefined) clock.clearTimeout(entry.retry);
    entry.retry = undefined;
    cancel(entry);
  }

  return {
    follow(agentId) {
      return new Observable<BusEvent>((follower) => {
        if (closed) {
          follower.complete();
          return undefined;
        }
        let entry = followed.get(agentId);
        const first = entry === undefined;
        if (entry === undefined) {
          entry = { agentId, followers: new Set(), target: undefined, call: undefined, answered: false, retry: undefined, delayMs: FIRST_RETRY_MS };
          followed.set(agentId, entry);
        }
        const joined = entry;
        joined.followers.add(follower);
        if (first) attach(joined);
        return () => release(joined, follower);
      });
    },
    ownerChanged(agentId) {
      const entry = followed.get(agentId);
      if (entry === undefined) return;
      if (entry.retry !== undefined) clock.clearTimeout(entry.retry);
      entry.retry = undefined;
      entry.delayMs = FIRST_RETRY_MS;
      attach(entry);
    },
    open: () => new Map([...followed.values()].filter((e) => e.answered).map((e) => [e.agentId, e.target ?? ''])),
    close() {
      closed = true;
      for (const entry of followed.values()) {
        if (entry.retry !== undefined) clock.clearTimeout(entry.retry);
        cancel(entry);
        for (const follower of [...entry.followers]) follower.complete();
      }
      followed.clear();
    },
  };
}
