/**
 * The JSON form of the schema's messages, checked against their protobufjs
 * descriptors rather than a second hand-written schema.
 *
 * In: snake_case or lowerCamelCase names; `null` means "not set" (proto3 JSON);
 * integers as numbers or decimal strings (64-bit ones within 2^53, as the
 * service counts in JS numbers); `bytes` as base64, standard or URL-safe,
 * padded or not. Unknown fields, a field given twice, a wrong type or a value
 * out of range are INVALID_ARGUMENT naming the field as the client spelled it
 * (`resources.memoryLimit`, `capabilities[2]`).
 *
 * Out: snake_case, unset fields omitted, `bytes` as base64, and a string field
 * holding another JSON value written as its JSON text: the proto carries JSON
 * payloads (`Message.content`) as text, so both doors show the same string.
 */
import protobuf from 'protobufjs';
import { SvcError } from '../../errors/svc-error.js';
import { lowerCamel } from './routes.js';

export type JsonObject = Record<string, unknown>;

/** Field names come from the client; an error repeats at most this much of one, so a huge key cannot inflate the answer. */
const MAX_NAME_CHARS = 128;

export function shortName(name: string): string {
  return name.length <= MAX_NAME_CHARS ? name : `${name.slice(0, MAX_NAME_CHARS)}…`;
}

function invalid(field: string, message: string, reason: string, extra: Record<string, string> = {}): SvcError {
  return new SvcError('INVALID_ARGUMENT', message, { field: shortName(field), reason, ...extra });
}

function wrongType(field: string, expected: string): SvcError {
  return invalid(field, `${shortName(field)} must be ${expected}`, 'wrong_type', { expected });
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

const join = (path: string, name: string): string => (path === '' ? name : `${path}.${name}`);

const byName = new WeakMap<protobuf.Type, Map<string, protobuf.Field>>();

/** The field a client named, by its snake_case or lowerCamelCase name. A Map, so `__proto__` is only an unknown name. */
export function fieldNamed(type: protobuf.Type, given: string): protobuf.Field | undefined {
  let names = byName.get(type);
  if (names === undefined) {
    names = new Map();
    for (const field of type.fieldsArray) {
      names.set(field.name, field);
      names.set(lowerCamel(field.name), field);
    }
    byName.set(type, names);
  }
  return names.get(given);
}

/** Inclusive bounds; 64-bit kinds stop at 2^53 - 1 because the service holds them in JS numbers. */
const INTEGER_RANGE: Readonly<Record<string, readonly [number, number]>> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  sint32: [-(2 ** 31), 2 ** 31 - 1],
  sfixed32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  fixed32: [0, 2 ** 32 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  sint64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  sfixed64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint64: [0, Number.MAX_SAFE_INTEGER],
  fixed64: [0, Number.MAX_SAFE_INTEGER],
};

const LONG_KINDS = new Set(['int64', 'sint64', 'sfixed64', 'uint64', 'fixed64']);

function decodeInteger(path: string, kind: string, value: unknown): number {
  const [min, max] = INTEGER_RANGE[kind] as readonly [number, number];
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) n = Number(value);
  else throw wrongType(path, 'an integer');
  if (!Number.isInteger(n)) throw wrongType(path, 'an integer');
  if (n < min || n > max) throw invalid(path, `${shortName(path)} must be between ${min} and ${max}`, 'out_of_range', { min: String(min), max: String(max) });
  return n;
}

const SPECIAL_FLOATS: Readonly<Record<string, number>> = { NaN: Number.NaN, Infinity: Number.POSITIVE_INFINITY, '-Infinity': Number.NEGATIVE_INFINITY };

function decodeFloat(path: string, value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const special = SPECIAL_FLOATS[value];
    if (special !== undefined) return special;
    const n = Number(value);
    if (value.trim() !== '' && Number.isFinite(n)) return n;
  }
  throw wrongType(path, 'a number');
}

const BASE64_BODY = /^[A-Za-z0-9+/_-]*$/;

/** Strict where Buffer.from(…, 'base64') is lenient: it skips foreign characters, which would hide a corrupted module. */
export function decodeBase64(path: string, value: unknown): Uint8Array {
  if (typeof value !== 'string') throw wrongType(path, 'a base64 string');
  let end = value.length;
  while (end > 0 && value.charCodeAt(end - 1) === 61 /* = */) end--;
  const body = value.slice(0, end);
  const padding = value.length - end;
  const valid = BASE64_BODY.test(body) && body.length % 4 !== 1 && (padding === 0 || (padding <= 2 && value.length % 4 === 0));
  if (!valid) throw invalid(path, `${shortName(path)} is not valid base64`, 'invalid_base64');
  return new Uint8Array(Buffer.from(body, 'base64'));
}

function decodeEnum(path: string, type: protobuf.Enum, value: unknown): string {
  if (typeof value === 'string' && Object.hasOwn(type.values, value)) return value;
  if (typeof value === 'number' && Object.hasOwn(type.valuesById, value)) return type.valuesById[value] as string;
  throw invalid(path, `${shortName(path)} must be one of ${Object.keys(type.values).join(', ')}`, 'wrong_type', { expected: 'enum' });
}

/** One scalar, enum or message value; `text` when it comes from a path or query string. */
function decodeSingle(field: protobuf.Field, value: unknown, path: string, text: boolean): unknown {
  const nested = field.resolvedType;
  if (nested instanceof protobuf.Type) return decodeMessage(nested, value, path);
  if (nested instanceof protobuf.Enum) return decodeEnum(path, nested, text && /^\d+$/.test(String(value)) ? Number(value) : value);
  const kind = field.type;
  if (kind in INTEGER_RANGE) return decodeInteger(path, kind, value);
  switch (kind) {
    case 'string':
      if (typeof value !== 'string') throw wrongType(path, 'a string');
      return value;
    case 'bool':
      if (typeof value === 'boolean') return value;
      if (text && (value === 'true' || value === 'false')) return value === 'true';
      throw wrongType(path, 'a boolean');
    case 'double':
    case 'float':
      return decodeFloat(path, value);
    case 'bytes':
      return decodeBase64(path, value);
    default:
      throw new Error(`unsupported field type ${kind} of ${field.fullName}`);
  }
}

/** One field's JSON value (a map, a list or a single value), checked against its descriptor. */
export function decodeFieldValue(field: protobuf.Field, value: unknown, path: string): unknown {
  if (field.map) {
    if (!isObject(value)) throw wrongType(path, 'an object');
    const keyIsString = (field as unknown as protobuf.MapField).keyType === 'string';
    // fromEntries defines own properties, so a `__proto__` key stays data.
    return Object.fromEntries(
      Object.entries(value).map(([key, v]) => {
        if (!keyIsString && !/^-?\d+$/.test(key)) throw invalid(join(path, key), `${shortName(join(path, key))}: keys of ${shortName(path)} must be integers`, 'wrong_type', { expected: 'integer key' });
        return [key, decodeSingle(field, v, join(path, key), false)];
      }),
    );
  }
  if (field.repeated) {
    if (!Array.isArray(value)) throw wrongType(path, 'an array');
    return value.map((item, i) => {
      if (item === null) throw wrongType(`${path}[${i}]`, 'a value, not null');
      return decodeSingle(field, item, `${path}[${i}]`, false);
    });
  }
  return decodeSingle(field, value, path, false);
}

/** Checks a JSON object against `type`; the result has snake_case names and only the fields given. */
export function decodeMessage(type: protobuf.Type, input: unknown, path = ''): JsonObject {
  if (!isObject(input)) throw wrongType(path === '' ? 'body' : path, 'an object');
  const out: JsonObject = {};
  const seen = new Map<string, string>();
  const oneofSet = new Map<protobuf.OneOf, string>();
  for (const [given, value] of Object.entries(input)) {
    const field = fieldNamed(type, given);
    const where = join(path, given);
    if (field === undefined) throw invalid(where, `unknown field ${shortName(where)}`, 'unknown_field');
    const earlier = seen.get(field.name);
    if (earlier !== undefined) throw invalid(where, `${shortName(where)} and ${shortName(earlier)} name the same field`, 'duplicate_field');
    seen.set(field.name, where);
    if (value === null) continue;
    const oneof = field.partOf;
    if (oneof) {
      const other = oneofSet.get(oneof);
      if (other !== undefined) throw invalid(where, `${shortName(where)} and ${shortName(other)} cannot both be set`, 'oneof_conflict');
      oneofSet.set(oneof, where);
    }
    out[field.name] = decodeFieldValue(field, value, where);
  }
  return out;
}

/**
 * A field's value from path or query text: repeated fields take every value
 * given, each split on commas (`?message_types=inform,request`); an empty
 * string is "not set". Returns undefined when nothing is set.
 */
export function decodeText(field: protobuf.Field, texts: readonly string[], path: string): unknown {
  if (field.map || field.resolvedType instanceof protobuf.Type) throw invalid(path, `${shortName(path)} cannot be given as text`, 'wrong_type', { expected: 'scalar' });
  if (field.repeated) {
    const items = texts.flatMap((t) => t.split(',')).filter((t) => t !== '');
    return items.length === 0 ? undefined : items.map((item, i) => decodeSingle(field, item, `${path}[${i}]`, true));
  }
  if (texts.length > 1) throw invalid(path, `${shortName(path)} is given ${texts.length} times`, 'duplicate_field');
  const text = texts[0];
  return text === undefined || text === '' ? undefined : decodeSingle(field, text, path, true);
}

function defaultScalar(field: protobuf.Field): unknown {
  if (field.resolvedType instanceof protobuf.Enum) return field.resolvedType.valuesById[0] ?? Object.keys(field.resolvedType.values)[0];
  if (field.type in INTEGER_RANGE || field.type === 'double' || field.type === 'float') return 0;
  if (field.type === 'bool') return false;
  if (field.type === 'bytes') return new Uint8Array(0);
  return '';
}

/** Fills every unset field with its proto3 default, nested messages included (a message containing itself stops at one level). */
export function withDefaults(type: protobuf.Type, value: JsonObject, outer: ReadonlySet<protobuf.Type> = new Set()): JsonObject {
  const seen = new Set([...outer, type]);
  const out: JsonObject = {};
  for (const field of type.fieldsArray) {
    const given = value[field.name];
    const nested = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    if (given !== undefined) out[field.name] = nested && !field.repeated && !field.map ? withDefaults(nested, given as JsonObject, seen) : given;
    else if (field.map) out[field.name] = {};
    else if (field.repeated) out[field.name] = [];
    else if (nested) {
      if (!seen.has(nested)) out[field.name] = withDefaults(nested, {}, seen);
    } else out[field.name] = defaultScalar(field);
  }
  return out;
}

function encodeSingle(field: protobuf.Field, value: unknown): unknown {
  const nested = field.resolvedType;
  if (nested instanceof protobuf.Type) return encodeMessage(nested, value);
  if (nested instanceof protobuf.Enum) return typeof value === 'number' ? (nested.valuesById[value] ?? value) : value;
  switch (field.type) {
    case 'string':
      return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
    case 'bytes':
      return value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') : value;
    default:
      // 64-bit values beyond 2^53 only exist as bigint; a string keeps them exact (proto3 JSON writes int64 as text).
      if (typeof value === 'bigint') return LONG_KINDS.has(field.type) && value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : String(value);
      return value;
  }
}

/** The JSON form of a value of `type`: the descriptor's fields only, snake_case, unset ones omitted. */
export function encodeMessage(type: protobuf.Type, value: unknown): JsonObject {
  const out: JsonObject = {};
  if (!isObject(value)) return out;
  for (const field of type.fieldsArray) {
    const v = value[field.name];
    if (v === undefined || v === null) continue;
    if (field.map) out[field.name] = Object.fromEntries(Object.entries(v as JsonObject).map(([k, item]) => [k, encodeSingle(field, item)]));
    else if (field.repeated) out[field.name] = (v as unknown[]).map((item) => encodeSingle(field, item));
    else out[field.name] = encodeSingle(field, v);
  }
  return out;
}
