/**
 * A request body as strict JSON (RFC 8259): UTF-8 checked on the bytes, so
 * an invalid sequence is refused instead of becoming U+FFFD (two different
 * names decoding to the same text); a key given twice in one object is
 * refused instead of the last one winning; `__proto__` is refused as a key,
 * as the body parser's `@hapi/bourne` did. Each refusal is INVALID_ARGUMENT
 * naming the field as the client spelled it (`resources.memory_limit`,
 * `capabilities[2]`), or `body` when no field contains the fault.
 *
 * JSON.parse does the parsing; it reports neither duplicates nor where a
 * string sits, so one scan over the text it accepted follows the nesting
 * (strings are skipped with `indexOf`, so a large base64 module costs little).
 * No installed library reports duplicate keys at JSON.parse's speed (see
 * docs/adr/0004-strict-json-bodies.md).
 */
import { isUtf8 } from 'node:buffer';
import { SvcError } from '../../errors/svc-error.js';
import { shortName } from './json-codec.js';

const REPLACEMENT = 0xfffd;
const FORBIDDEN_KEY = '__proto__';

function refusal(field: string, message: string, reason: string, extra: Record<string, string> = {}): SvcError {
  return new SvcError('INVALID_ARGUMENT', message, { field: shortName(field), reason, ...extra });
}

const member = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/**
 * One open object or array. Paths are built only for an error, from the
 * chain of frames: building one per key cost more than the rest of the scan.
 */
interface Frame {
  readonly parent: Frame | undefined;
  /** Where this container sits in its parent: a key, an index, or nothing at the top. */
  readonly at: string | number | undefined;
  /** Keys seen so far, for an object; undefined for an array. */
  readonly keys: Set<string> | undefined;
  /** The key whose value comes next (object), once read. */
  key: string | undefined;
  /** The index of the value that comes next (array). */
  index: number;
}

function pathOf(frame: Frame | undefined): string {
  if (frame === undefined || frame.parent === undefined && frame.at === undefined) return '';
  const parent = pathOf(frame.parent);
  return typeof frame.at === 'number' ? `${parent === '' ? 'body' : parent}[${frame.at}]` : member(parent, frame.at ?? '');
}

/** The path of the value that comes next in `frame`. */
function valuePath(frame: Frame | undefined): string {
  if (frame === undefined) return '';
  const path = pathOf(frame);
  return frame.keys === undefined ? `${path === '' ? 'body' : path}[${frame.index}]` : member(path, frame.key ?? '');
}

/** Where the scan stopped: inside an unterminated string (a key, or a value at `path`), or at the end. */
interface ScanEnd {
  openString?: { isKey: boolean; path: string };
}

/** Index of the quote that closes the string opened at `start`, or -1. */
function closingQuote(text: string, start: number): number {
  for (let at = text.indexOf('"', start + 1); at !== -1; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 92 /* \ */) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
}

function open(parent: Frame | undefined, isObject: boolean): Frame {
  const at = parent === undefined ? undefined : parent.keys === undefined ? parent.index : parent.key;
  return { parent, at, keys: isObject ? new Set() : undefined, key: undefined, index: 0 };
}

/**
 * Walks JSON text (whole and valid, or a valid prefix of it), calling
 * `onKey` with each object key before the key becomes the frame's.
 */
function scan(text: string, onKey: (frame: Frame, key: string) => void): ScanEnd {
  let top: Frame | undefined;
  for (let i = 0; i < text.length; i++) {
    switch (text.charCodeAt(i)) {
      case 123 /* { */:
        top = open(top, true);
        break;
      case 91 /* [ */:
        top = open(top, false);
        break;
      case 125 /* } */:
      case 93 /* ] */:
        top = top?.parent;
        break;
      case 44 /* , */:
        if (top === undefined) break;
        if (top.keys === undefined) top.index++;
        else top.key = undefined;
        break;
      case 34 /* " */: {
        const isKey = top?.keys !== undefined && top.key === undefined;
        const end = closingQuote(text, i);
        if (end === -1) return { openString: { isKey, path: isKey ? pathOf(top) : valuePath(top) } };
        if (isKey && top !== undefined) {
          const raw = text.slice(i + 1, end);
          const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
          onKey(top, key);
          top.key = key;
        }
        i = end;
        break;
      }
      default:
        break;
    }
  }
  return {};
}

/** Refuses a key given twice in one object, and `__proto__`. */
function checkKeys(frame: Frame, key: string): void {
  const keys = frame.keys as Set<string>;
  if (key !== FORBIDDEN_KEY && !keys.has(key)) {
    keys.add(key);
    return;
  }
  const path = member(pathOf(frame), key);
  if (key === FORBIDDEN_KEY) throw refusal(path, `${shortName(path)}: "${FORBIDDEN_KEY}" is not accepted as a key`, 'forbidden_key');
  throw refusal(path, `${shortName(path)} is given twice`, 'duplicate_key');
}

/** Byte offset of the first invalid UTF-8 sequence in `bytes`, which `isUtf8` refused. */
function firstInvalidByte(bytes: Buffer, decoded: string): number {
  // Up to the first U+FFFD that is not the bytes EF BF BD, the decoding was one-to-one.
  for (let at = decoded.indexOf(String.fromCharCode(REPLACEMENT)); at !== -1; at = decoded.indexOf(String.fromCharCode(REPLACEMENT), at + 1)) {
    const offset = Buffer.byteLength(decoded.slice(0, at));
    if (!(bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd)) return offset;
  }
  return bytes.length;
}

function invalidUtf8(bytes: Buffer): SvcError {
  const offset = firstInvalidByte(bytes, bytes.toString('utf8'));
  const end = scan(bytes.subarray(0, offset).toString('utf8'), () => undefined);
  const where = end.openString;
  const field = where === undefined || where.path === '' ? 'body' : where.path;
  const what = where?.isKey === true ? `a key of ${field === 'body' ? 'the body' : field}` : field;
  return refusal(field, `${what} is not valid UTF-8 (byte ${offset})`, 'invalid_utf8', { offset: String(offset) });
}

/** The first character of the document, past the whitespace RFC 8259 allows (space, tab, line feed, carriage return). */
function firstCharacter(text: string): string {
  let at = 0;
  while (at < text.length && ' \t\n\r'.includes(text.charAt(at))) at++;
  return text.charAt(at);
}

/**
 * The body as a JSON object or array; an empty body is an empty object (no
 * fields set). Throws INVALID_ARGUMENT as the file comment says.
 */
export function parseStrictJson(body: Buffer): unknown {
  // RFC 8259 lets a parser ignore a byte order mark; the body parser did.
  const bytes = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? body.subarray(3) : body;
  if (!isUtf8(bytes)) throw invalidUtf8(bytes);
  const text = bytes.toString('utf8');
  if (text === '') return {};
  const first = firstCharacter(text);
  if (first !== '{' && first !== '[') throw refusal('body', 'malformed JSON body: the document must be an object or an array', 'malformed_json');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw refusal('body', `malformed JSON body: ${error instanceof Error ? error.message : String(error)}`, 'malformed_json');
  }
  scan(text, checkKeys);
  return value;
}
