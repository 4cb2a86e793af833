/**
 * The text of an agent's crash or failed start as it goes into transition
 * reasons (`trap: …`, `start_failed: …`), log lines and FIPA failures.
 */

/** Keeps exit reasons short for log lines; the full message stays in the error. */
const MAX_REASON_LENGTH = 200;

export function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH)}…` : text;
}
