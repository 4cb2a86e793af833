/**
 * Subscription filters (`SubscribeRequest.filter`, the `agent_id` and
 * `message_types` query of `GET /messages`): validation of client input and
 * compilation to the predicate the bus runs once per event and subscriber.
 */
import { SvcError } from '../errors/svc-error.js';
import { illFormed, isWellFormed, truncate } from '../text/well-formed.js';
import type { BusEvent } from './events.js';
import { PLATFORM_SENDER, validateId, type Message } from './message.js';
import { isPerformative, type Performative } from './performatives.js';

/**
 * `agent_id` matches a message whose sender OR receiver is that agent, the
 * platform's failures about a message to it (`failed_receiver`), and that
 * agent's lifecycle events. `message_types` matches a message whose
 * performative is listed, and excludes lifecycle events (they have no
 * performative). Both set: both must match. Neither (or an empty list): all.
 */
export interface BusFilter {
  agent_id?: string;
  message_types?: readonly Performative[];
}

export type EventPredicate = (event: BusEvent) => boolean;

function invalid(field: string, message: string, reason: string, extra: Record<string, string> = {}): SvcError {
  return new SvcError('INVALID_ARGUMENT', message, { field, reason, ...extra });
}

/** Reads a client's filter (snake_case or lowerCamelCase); `null`, `''` and `[]` mean "not set". */
export function validateFilter(input: unknown): BusFilter {
  if (input === undefined || input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input)) throw invalid('filter', 'filter must be an object', 'wrong_type', { expected: 'object' });
  const filter: BusFilter = {};
  for (const [given, value] of Object.entries(input)) {
    const name = given === 'agentId' ? 'agent_id' : given === 'messageTypes' ? 'message_types' : given;
    if (name !== 'agent_id' && name !== 'message_types') throw invalid(given, `unknown field ${given}`, 'unknown_field');
    if (value === undefined || value === null || value === '') continue;
    if (name === 'agent_id') {
      filter.agent_id = validateId(given, value);
      continue;
    }
    if (!Array.isArray(value)) throw invalid(given, `${given} must be a list of performatives`, 'wrong_type', { expected: 'array' });
    for (const type of value) {
      if (!isPerformative(type)) {
        if (typeof type === 'string' && !isWellFormed(type)) throw illFormed(given);
        const shown = truncate(String(type), 64);
        throw invalid(given, `${JSON.stringify(shown)} is not a FIPA performative`, 'unknown_performative', { value: shown });
      }
    }
    if (value.length > 0) filter.message_types = [...new Set(value as Performative[])];
  }
  return filter;
}

const ALL: EventPredicate = () => true;

const involves = (m: Message, agent: string): boolean =>
  m.sender === agent || m.receiver === agent || (m.sender === PLATFORM_SENDER && m.metadata['failed_receiver'] === agent);

/** One specialised closure per filter shape, so the per-event cost is only the checks that apply. */
export function compileFilter(filter: BusFilter = {}): EventPredicate {
  const agent = filter.agent_id === '' ? undefined : filter.agent_id;
  const types: ReadonlySet<string> | undefined = filter.message_types?.length ? new Set(filter.message_types) : undefined;
  if (agent === undefined) return types === undefined ? ALL : (e) => e.kind === 'message' && types.has(e.message.message_type);
  if (types === undefined) return (e) => (e.kind === 'message' ? involves(e.message, agent) : e.agent_id === agent);
  return (e) => e.kind === 'message' && types.has(e.message.message_type) && involves(e.message, agent);
}
