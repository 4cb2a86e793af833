/**
 * What the outside learns of an agent's lifecycle: every state change of its
 * machine is one log line (`agent_id`, `from`, `to`, `reason`) and one
 * `lifecycle` event on the bus (DESIGN.md section 6).
 *
 * Both happen in the context of whatever caused the change: a deploy or
 * undeploy call, the execution that crashed the agent (dispatcher.ts runs
 * the crash in it, and the restart after its backoff follows from there), or
 * the message that woke it (agent-host.ts). So the log line carries that
 * trace's id, and inside a trace the event is published in a
 * `svc.events.emit` span. A change no call or message caused (hibernation
 * after the idle timeout, restore at start) has no trace and gets no span: a
 * root span of its own would start a trace per hibernation.
 *
 * A deploy holds its agent's events until the agent is registered, then
 * publishes them in one `svc.events.emit` span (agent-host.ts `deploy`): a
 * subscriber never hears of an agent that the store and the registry do not
 * have yet. A deploy that fails publishes what its agent went through all the
 * same, so every transition still reaches the bus.
 */
import { context, trace } from '@opentelemetry/api';
import type { MessageBus } from '../bus/bus.js';
import type { LifecycleEvent } from '../bus/events.js';
import type { Logger } from '../telemetry/logger.js';
import { SPAN_ATTRIBUTES, SPANS } from '../telemetry/span-names.js';
import type { Tracing } from '../telemetry/tracing.js';
import type { LifecycleState } from './agent-machine.js';
import type { AgentRuntime } from './agent-runtime.js';

/** `svc.event.type` of the spans here: the kind of bus event they publish. */
export const LIFECYCLE_EVENT_TYPE = 'lifecycle';

export const TRANSITION_MSG = 'agent transition';

export interface LifecycleEvents {
  /** One state change: the log line now; the bus event now, or held while the agent's deploy is not registered. */
  transition(agent: AgentRuntime, from: LifecycleState | null, to: LifecycleState, reason: string): void;
  /** Publishes the events a deploy held back, in one `svc.events.emit` span, and stops holding. */
  release(agent: AgentRuntime): void;
}

export function createLifecycleEvents(bus: MessageBus, log: Logger, tracing: Tracing): LifecycleEvents {
  const attributes = (agent: AgentRuntime) => ({ [SPAN_ATTRIBUTES.agentId]: agent.id, [SPAN_ATTRIBUTES.eventType]: LIFECYCLE_EVENT_TYPE });

  return {
    transition(agent, from, to, reason) {
      log.info({ agent_id: agent.id, from, to, reason }, TRANSITION_MSG);
      const event: LifecycleEvent = { kind: 'lifecycle', agent_id: agent.id, from, to, reason, at: new Date().toISOString() };
      if (agent.heldEvents !== undefined) agent.heldEvents.push(event);
      else if (trace.getSpan(context.active()) === undefined) bus.publish(event);
      else tracing.withSpan(SPANS.eventsEmit, attributes(agent), () => bus.publish(event));
    },

    release(agent) {
      const events = agent.heldEvents;
      agent.heldEvents = undefined;
      if (events === undefined || events.length === 0) return;
      tracing.withSpan(SPANS.eventsEmit, attributes(agent), () => {
        for (const event of events) bus.publish(event);
      });
    },
  };
}
