/**
 * An agent's lifecycle transition as a `Message`, for the streams filtered by
 * that agent (`SubscribeMessages`, the WebSocket): they carry only messages,
 * and a subscriber watching an agent must see it crash, restart and fail. A
 * FIPA `inform` from the platform to the agent, ontology
 * `LIFECYCLE_ONTOLOGY`, the transition in `content` and in `metadata`.
 */
import type { LifecycleEvent } from './events.js';
import { completeMessage, PLATFORM_SENDER, type CompleteOptions, type Message } from './message.js';

export const LIFECYCLE_ONTOLOGY = 'svc-lifecycle';

export function lifecycleMessage(event: LifecycleEvent, opts: CompleteOptions): Message {
  const from = event.from ?? '';
  return completeMessage(
    {
      sender: PLATFORM_SENDER,
      receiver: event.agent_id,
      message_type: 'inform',
      ontology: LIFECYCLE_ONTOLOGY,
      content: { agent_id: event.agent_id, from: event.from, to: event.to, reason: event.reason, at: event.at },
      metadata: { agent_id: event.agent_id, from, to: event.to, reason: event.reason },
    },
    opts,
  );
}
