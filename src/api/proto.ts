/**
 * The one schema (`proto/svc/v1/management.proto`), loaded once for both
 * doors: the grpc-js package definition (which reflection also reads), the
 * protobufjs Root behind it (message types, the `google.api.http` options the
 * REST gateway derives its routes from), and the `svc.v1.Error` codec for
 * the `svc-error-bin` trailer.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSync, type MessageTypeDefinition, type Options, type PackageDefinition } from '@grpc/proto-loader';
import protobuf from 'protobufjs';

/** The schema file, relative to {@link PROTO_DIR}. */
export const MANAGEMENT_PROTO_FILE = 'svc/v1/management.proto';
export const PROTO_PACKAGE = 'svc.v1';
export const MANAGEMENT_SERVICE_NAME = `${PROTO_PACKAGE}.ManagementService`;

/** Found by walking up from this file: it runs from `src/api/` under tsx and from `dist/src/api/` once built. */
export const PROTO_DIR: string = (() => {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dir, 'proto');
    if (existsSync(join(candidate, MANAGEMENT_PROTO_FILE))) return candidate;
  }
  throw new Error(`cannot find proto/${MANAGEMENT_PROTO_FILE} above ${fileURLToPath(import.meta.url)}`);
})();

/**
 * How both doors read the schema: snake_case field names as in the JSON form,
 * 64-bit integers as JS numbers (counters and sizes stay far below 2^53),
 * enums as names, unset fields as their defaults (proto3 semantics), and the
 * set member of a oneof named.
 */
export const LOADER_OPTIONS: Readonly<Options> = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

/** The JSON shape of `svc.v1.Error`, as it travels in REST bodies and in the gRPC trailer. */
export interface ErrorBody {
  code: string;
  message: string;
  trace_id: string;
  metadata: Record<string, string>;
}

export interface ManagementProto {
  /** For `grpc.loadPackageDefinition`, `server.addService` and `@grpc/reflection`. */
  readonly packageDefinition: PackageDefinition;
  /** The protobufjs Root, parsed with `keepCase`, every reference resolved. */
  readonly root: protobuf.Root;
  readonly service: protobuf.Service;
  /** `svc.v1.<name>`; throws for a name the schema does not define. */
  messageType(name: string): protobuf.Type;
  encodeError(error: ErrorBody): Uint8Array;
  /** Throws on bytes that are not an `svc.v1.Error`. */
  decodeError(bytes: Uint8Array): ErrorBody;
}

let loaded: ManagementProto | undefined;

/** Parses the schema on first use (a few milliseconds) and returns the same object afterwards. */
export function loadManagementProto(): ManagementProto {
  loaded ??= parse();
  return loaded;
}

function parse(): ManagementProto {
  const packageDefinition = loadSync(MANAGEMENT_PROTO_FILE, { ...LOADER_OPTIONS });
  // proto-loader does not expose its Root, so a second parse with the same include path builds ours.
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (existsSync(join(PROTO_DIR, target)) ? join(PROTO_DIR, target) : target);
  // `//` comments too (the schema's own style), so the OpenAPI document carries them as descriptions.
  root.loadSync(MANAGEMENT_PROTO_FILE, { keepCase: true, alternateCommentMode: true });
  root.resolveAll();
  const service = root.lookupService(MANAGEMENT_SERVICE_NAME);
  // proto-loader's own codec, so the trailer reads back with exactly the options every other message does.
  const errorCodec = packageDefinition[`${PROTO_PACKAGE}.Error`] as MessageTypeDefinition<ErrorBody, ErrorBody>;
  return {
    packageDefinition,
    root,
    service,
    messageType: (name) => root.lookupType(`${PROTO_PACKAGE}.${name}`),
    encodeError: (error) => errorCodec.serialize(error),
    decodeError: (bytes) => errorCodec.deserialize(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)),
  };
}
