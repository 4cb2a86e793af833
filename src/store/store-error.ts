/**
 * Failures of the store the rest of the server reacts to. The store does not
 * know the public error model (src/errors); `AgentService` maps each kind to a
 * code in one place:
 *
 * | kind               | error code         |
 * |--------------------|--------------------|
 * | conflict           | ALREADY_EXISTS     |
 * | not_found          | NOT_FOUND          |
 * | invalid_page_token | INVALID_ARGUMENT   |
 * | corrupt, too_new   | refuse to start (INTERNAL if met at run time) |
 */
export type StoreErrorKind = 'conflict' | 'not_found' | 'invalid_page_token' | 'corrupt' | 'too_new';

export class StoreError extends Error {
  override readonly name = 'StoreError';

  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    /** String-to-string so the service can pass it on as error metadata unchanged. */
    readonly metadata: Readonly<Record<string, string>> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isStoreError(value: unknown, kind?: StoreErrorKind): value is StoreError {
  return value instanceof StoreError && (kind === undefined || value.kind === kind);
}
