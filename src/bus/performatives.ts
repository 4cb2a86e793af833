/**
 * The message vocabulary: the 22 FIPA-ACL communicative acts (FIPA SC00037J).
 * Any other `message_type` is refused, from clients and agents alike.
 */
export const PERFORMATIVES = [
  'accept-proposal',
  'agree',
  'cancel',
  'cfp',
  'confirm',
  'disconfirm',
  'failure',
  'inform',
  'inform-if',
  'inform-ref',
  'not-understood',
  'propagate',
  'propose',
  'proxy',
  'query-if',
  'query-ref',
  'refuse',
  'reject-proposal',
  'request',
  'request-when',
  'request-whenever',
  'subscribe',
] as const;

export type Performative = (typeof PERFORMATIVES)[number];

const PERFORMATIVE_SET: ReadonlySet<string> = new Set(PERFORMATIVES);

/** Exact match: the names are lower-case in the contract, so `INFORM` is refused. */
export function isPerformative(value: unknown): value is Performative {
  return typeof value === 'string' && PERFORMATIVE_SET.has(value);
}
