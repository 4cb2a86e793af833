/**
 * Failures of the store the rest of the server reacts to. The store does not
 * know the public error model (src/errors); `AgentService` maps each kind to a
 * code in one place (agents/agent-errors.ts):
 *
 * | kind                          | error code                                  |
 * |-------------------------------|---------------------------------------------|
 * | conflict                      | ALREADY_EXISTS                              |
 * | not_found                     | NOT_FOUND                                   |
 * | invalid_page_token            | INVALID_ARGUMENT                            |
 * | full, readonly, corrupt, io, busy | UNAVAILABLE, reason `storage_<kind>`    |
 * | too_new, lost, locked         | refuse to start                             |
 *
 * `corrupt` met while opening also refuses the start (see open-store.ts).
 */
export type StoreErrorKind =
  | 'conflict'
  | 'not_found'
  | 'invalid_page_token'
  | StorageFaultKind
  | 'too_new'
  /** The store holds less than the data directory says was acknowledged (open-store.ts). */
  | 'lost'
  /** Another server holds the data directory (data-dir-lock.ts). */
  | 'locked';

/** The store cannot do its work: the disk, the file or the database is at fault, not the request. */
export type StorageFaultKind = 'full' | 'readonly' | 'corrupt' | 'io' | 'busy';

export const STORAGE_FAULT_KINDS: readonly StorageFaultKind[] = ['full', 'readonly', 'corrupt', 'io', 'busy'];

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

export function isStorageFault(value: unknown): value is StoreError & { kind: StorageFaultKind } {
  return value instanceof StoreError && (STORAGE_FAULT_KINDS as readonly string[]).includes(value.kind);
}
