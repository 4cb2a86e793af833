/** Small schemas written inline for the route and codec tables, parsed as the server parses the real one. */
import { join } from 'node:path';
// proto-loader registers google/protobuf/descriptor.proto with protobufjs, which the annotations import.
import '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { PROTO_DIR } from '../../../src/api/proto.js';

export function inlineRoot(body: string): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(PROTO_DIR, target);
  root.loadSync('google/api/annotations.proto', { keepCase: true });
  protobuf.parse(`syntax = "proto3"; package t; import "google/api/annotations.proto";\n${body}`, root, { keepCase: true });
  root.resolveAll();
  return root;
}

/** The service `t.S` of an inline schema. */
export function inlineService(body: string): protobuf.Service {
  return inlineRoot(body).lookupService('t.S');
}
