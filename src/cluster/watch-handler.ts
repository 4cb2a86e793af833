/**
 * The serving side of `Watch` (cluster.proto): a node follows an agent this
 * node hosts. The call's proof is checked as for the unary calls
 * (node-call-auth.ts); then the stream is one bus subscription filtered by
 * the agent, bounded like a client's stream: grpc-js's buffering is its
 * back-pressure, and a watcher that falls behind is dropped with
 * RESOURCE_EXHAUSTED (`slow_consumer`). Only this node's own publications
 * travel: what this node itself receives from a watch never does.
 */
import { once } from 'node:events';
import { Metadata, type ServerWritableStream } from '@grpc/grpc-js';
import { toGrpcStatus } from '../api/grpc/grpc-errors.js';
import type { BoundedSink, SinkWrite } from '../bus/bounded-sink.js';
import type { BusEvent } from '../bus/events.js';
import { validateId } from '../bus/message.js';
import { SvcError } from '../errors/svc-error.js';
import { newTraceId } from '../telemetry/trace-ids.js';
import { clusterPath } from './cluster-proto.js';
import { verifyCall, type CallKey } from './node-call-auth.js';
import { encodeWatchEvent, type WatchEventProto } from './watch-event.js';

/** This node's agents, as a watch reaches them. */
export interface WatchedAgents {
  /** Writes the events of an agent hosted here through `write`, bounded; NOT_FOUND when it is not hosted here. */
  watch(agentId: string, write: SinkWrite<BusEvent>): BoundedSink;
}

export interface WatchHandlerOptions {
  readonly key: CallKey;
  /** Undefined until this node's agents run: watches are then UNAVAILABLE. */
  readonly local: () => WatchedAgents | undefined;
  readonly now: () => number;
}

export interface WatchRequestProto {
  agent_id: string;
}

export function createWatchHandler(options: WatchHandlerOptions): (call: ServerWritableStream<WatchRequestProto, WatchEventProto>) => void {
  const path = clusterPath('Watch');
  return (call) => {
    const traceId = newTraceId();
    let sink: BoundedSink | undefined;
    let ended = false;
    const end = (): boolean => {
      if (ended) return false;
      ended = true;
      sink?.close();
      return true;
    };
    const fail = (error: unknown): void => {
      if (end()) call.emit('error', toGrpcStatus(error, traceId));
    };
    call.on('cancelled', end);
    const headers = {
      get: (name: string) => {
        const value = (call.metadata as Metadata).get(name)[0];
        return typeof value === 'string' ? value : undefined;
      },
    };
    const agentId = typeof call.request.agent_id === 'string' ? call.request.agent_id : '';
    const refused = verifyCall(options.key, headers, { path, peer: call.getPeer(), nowMs: options.now(), content: agentId });
    if (refused !== undefined) {
      fail(new SvcError('UNAUTHENTICATED', refused, { reason: 'cluster_auth' }));
      return;
    }
    const local = options.local();
    if (local === undefined) {
      fail(new SvcError('UNAVAILABLE', 'this node\'s agents are not running', { reason: 'starting' }));
      return;
    }
    const write = (event: BusEvent): void | Promise<unknown> => (ended || call.write(encodeWatchEvent(event)) ? undefined : once(call, 'drain'));
    try {
      if (agentId === '') throw new SvcError('INVALID_ARGUMENT', 'agent_id is required', { field: 'agent_id', reason: 'required' });
      sink = local.watch(validateId('agent_id', agentId), write);
    } catch (error) {
      fail(error);
      return;
    }
    // Headers now: they tell the watcher the subscription is in place.
    call.sendMetadata(new Metadata());
    sink.done.then(() => {
      if (end()) call.end();
    }, fail);
  };
}
