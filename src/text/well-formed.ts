/**
 * Well-formed client text. A JSON body can spell a lone UTF-16 surrogate
 * (`"\ud800"`); such a string has no UTF-8 form, so protobuf encodes it as
 * invalid UTF-8 and a gRPC client in another language fails to decode the
 * answer that carries it. The validators refuse it before it is stored or
 * forwarded, and errors never cut a client's text inside a surrogate pair.
 */
import { SvcError } from '../errors/svc-error.js';

/** ES2024's `String.prototype.isWellFormed`: Node 20 has it, the ES2023 lib does not declare it. */
interface Es2024String {
  isWellFormed(): boolean;
}

/** False when `text` holds a surrogate without its pair (a lone high, a lone low, or a reversed pair). */
export function isWellFormed(text: string): boolean {
  return (text as unknown as Es2024String).isWellFormed();
}

/** The refusal of ill-formed text, the same from every validator; `field` names the field as the client spelled it. */
export function illFormed(field: string): SvcError {
  return new SvcError('INVALID_ARGUMENT', `${field} contains a lone UTF-16 surrogate, which is not valid Unicode`, { field, reason: 'invalid_utf16' });
}

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;

/** At most `max` UTF-16 units of `text`, one fewer when cutting at `max` would split a surrogate pair. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max);
}
