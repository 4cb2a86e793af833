/**
 * Strict request decoding on the gRPC door. protobufjs (under proto-loader)
 * decodes leniently: a varint cut off at the end of an embedded message
 * reads on into the bytes after it, because only the whole buffer bounds a
 * read; invalid UTF-8 in a `string` becomes U+FFFD; a known field in the
 * wrong wire type is read as if it were right. Each request is therefore
 * walked first, every embedded message through a reader of its own bytes
 * (so its end bounds every read in it), with each `string` checked as
 * UTF-8 and each known field's wire type checked against its type. Only a
 * request that passes reaches proto-loader's own deserializer.
 *
 * A refused request is not thrown from the deserializer: grpc-js would turn
 * that into a bare INTERNAL without the field. It is handed to the method as
 * a rejection (`rejectionOf`), which the handler answers INVALID_ARGUMENT
 * with the field as `a.b[2]` in snake_case.
 */
import { isUtf8 } from 'node:buffer';
import type { ServiceDefinition } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { SvcError } from '../../errors/svc-error.js';

const REJECTED: unique symbol = Symbol('svc.rejectedRequest');

interface Rejection {
  readonly [REJECTED]: SvcError;
}

/** The refusal a method was handed instead of its request, if it was. */
export function rejectionOf(request: unknown): SvcError | undefined {
  return typeof request === 'object' && request !== null && REJECTED in request ? (request as Rejection)[REJECTED] : undefined;
}

/** Wire types (protobuf encoding guide): varint, 64-bit, length-delimited, 32-bit. */
const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

const WIRE_TYPE_OF: Readonly<Record<string, number>> = {
  int32: VARINT,
  int64: VARINT,
  uint32: VARINT,
  uint64: VARINT,
  sint32: VARINT,
  sint64: VARINT,
  bool: VARINT,
  fixed64: FIXED64,
  sfixed64: FIXED64,
  double: FIXED64,
  fixed32: FIXED32,
  sfixed32: FIXED32,
  float: FIXED32,
  string: LENGTH_DELIMITED,
  bytes: LENGTH_DELIMITED,
};

function malformed(field: string, detail: string): SvcError {
  return new SvcError('INVALID_ARGUMENT', `the request could not be read: ${field === '' ? '' : `${field}: `}${detail}`, {
    reason: 'malformed_request',
    ...(field === '' ? {} : { field }),
  });
}

function invalidUtf8(field: string): SvcError {
  return new SvcError('INVALID_ARGUMENT', `${field} is not valid UTF-8`, { field, reason: 'invalid_utf8' });
}

/** The wire type a field's values are written in; a repeated scalar may also come packed (length-delimited). */
function acceptsWireType(field: protobuf.Field, wireType: number): boolean {
  if (field.map || field.resolvedType instanceof protobuf.Type) return wireType === LENGTH_DELIMITED;
  const expected = field.resolvedType instanceof protobuf.Enum ? VARINT : WIRE_TYPE_OF[field.type];
  return wireType === expected || (field.repeated && expected !== LENGTH_DELIMITED && wireType === LENGTH_DELIMITED);
}

/** protobufjs's reader errors (a read past the end, a bad wire type) as a refusal naming `field`; our own refusals as they are. */
function readFailure(error: unknown, field: string): SvcError {
  if (error instanceof SvcError) return error;
  return malformed(field, error instanceof RangeError ? 'truncated' : error instanceof Error ? error.message : String(error));
}

/** A length-delimited value of a field of `valueType`: a string checked as UTF-8, a message walked, bytes taken as they are. */
function checkValue(valueType: string, resolved: protobuf.ReflectionObject | null, bytes: Uint8Array, path: string): void {
  if (resolved instanceof protobuf.Type) return checkMessage(resolved, bytes, path);
  if (valueType === 'string' && !isUtf8(bytes)) throw invalidUtf8(path);
}

/** A map entry: key 1 and value 2, each of the map's types. */
function checkMapEntry(field: protobuf.MapField, bytes: Uint8Array, path: string): void {
  const reader = protobuf.Reader.create(bytes);
  try {
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      const id = tag >>> 3;
      const wireType = tag & 7;
      if (wireType !== LENGTH_DELIMITED || (id !== 1 && id !== 2)) {
        reader.skipType(wireType);
        continue;
      }
      const value = reader.bytes();
      if (id === 1 && field.keyType === 'string' && !isUtf8(value)) throw invalidUtf8(`${path} (a key)`);
      if (id === 2) checkValue(field.type, field.resolvedType, value, path);
    }
  } catch (error) {
    throw readFailure(error, path);
  }
}

/**
 * Walks one message; `path` names it (`''` for the request itself). One
 * try around the loop, with the field being read in `where`: this runs for
 * every request, and a closure per read cost as much as the decoding.
 */
function checkMessage(type: protobuf.Type, bytes: Uint8Array, path: string): void {
  const reader = protobuf.Reader.create(bytes);
  /** Occurrences so far of each repeated field, to name `capabilities[2]`. */
  let counts: Map<number, number> | undefined;
  let where = path;
  try {
    while (reader.pos < reader.len) {
      where = path;
      const tag = reader.uint32();
      const id = tag >>> 3;
      const wireType = tag & 7;
      if (id === 0) throw malformed(path, 'field number 0');
      const field = type.fieldsById[id];
      if (field === undefined) {
        // An unknown field (a newer client's) is skipped, as proto3 says; it must still end where it says it does.
        reader.skipType(wireType);
        continue;
      }
      const name = path === '' ? field.name : `${path}.${field.name}`;
      where = name;
      if (field.repeated && !field.map) {
        counts ??= new Map();
        const index = counts.get(id) ?? 0;
        counts.set(id, index + 1);
        where = `${name}[${index}]`;
      }
      if (!acceptsWireType(field, wireType)) throw malformed(where, `wire type ${wireType} does not fit a field of type ${field.type}`);
      if (wireType !== LENGTH_DELIMITED) {
        reader.skipType(wireType);
        continue;
      }
      const value = reader.bytes();
      if (field instanceof protobuf.MapField) checkMapEntry(field, value, name);
      else checkValue(field.type, field.resolvedType, value, where);
    }
  } catch (error) {
    throw readFailure(error, where);
  }
}

/** The request's refusal, or undefined when it is well formed. */
export function checkRequest(type: protobuf.Type, bytes: Uint8Array): SvcError | undefined {
  try {
    checkMessage(type, bytes, '');
    return undefined;
  } catch (error) {
    if (error instanceof SvcError) return error;
    throw error;
  }
}

/**
 * `definition` with each method's request deserializer preceded by the
 * strict check against `service`'s request type of the same name.
 */
export function withStrictDecoding(definition: ServiceDefinition, service: protobuf.Service): ServiceDefinition {
  const strict: Record<string, ServiceDefinition[string]> = {};
  for (const [name, method] of Object.entries(definition)) {
    const type = service.methods[name]?.resolvedRequestType;
    if (type === null || type === undefined) throw new Error(`no request type for ${name} in ${service.fullName}`);
    const deserialize = method.requestDeserialize;
    strict[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer) => {
        const refusal = checkRequest(type, bytes);
        return refusal === undefined ? deserialize(bytes) : ({ [REJECTED]: refusal } satisfies Rejection);
      },
    };
  }
  return strict;
}
