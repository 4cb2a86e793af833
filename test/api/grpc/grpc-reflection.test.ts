/**
 * Server reflection, as a generic client (grpcurl, Postman) uses it: a
 * grpc-js client of `grpc.reflection.v1.ServerReflection` and of the older
 * v1alpha lists the services and resolves the file descriptor of the
 * management service, from which the service and its methods can be read.
 * The files are named and linked as protoc would (`svc/v1/management.proto`
 * importing `google/api/annotations.proto`, ...): a client looks a file up by
 * that name and follows `dependency` to the rest.
 */
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { credentials, loadPackageDefinition, type ClientDuplexStream, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { loadManagementProto, MANAGEMENT_PROTO_FILE, MANAGEMENT_SERVICE_NAME } from '../../../src/api/proto.js';
import { startGrpcTestServer, SUITE_TIMEOUT, type GrpcTestServer } from './grpc-harness.js';

// The protos ship with @grpc/reflection: build/src/index.js → build/proto/.
const REFLECTION_PROTOS = join(dirname(dirname(fileURLToPath(import.meta.resolve('@grpc/reflection')))), 'proto');

/** The files the schema imports, directly or not, with `management.proto` itself. */
const SCHEMA_FILES = [MANAGEMENT_PROTO_FILE, 'google/api/annotations.proto', 'google/api/http.proto', 'google/protobuf/descriptor.proto'];
const HTTP_EXTENSION = { containing_type: 'google.protobuf.MethodOptions', extension_number: 72295728 };
const METHODS = [
  'CallAgent',
  'CreateKey',
  'CreateToken',
  'DeployAgent',
  'FollowAgentLogs',
  'GetAgent',
  'GetAgentLogs',
  'GetSystemConfig',
  'Health',
  'ListAgents',
  'ListAudit',
  'ListKeys',
  'ListMembers',
  'Login',
  'LoginCallback',
  'Metrics',
  'RefreshToken',
  'RestartAgent',
  'RevokeKey',
  'RotateKey',
  'SendMessage',
  'SetLockdown',
  'SubscribeMessages',
  'UndeployAgent',
  'UpdateAgent',
];

interface ReflectionResponse {
  message_response: string;
  list_services_response?: { service: Array<{ name: string }> };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  all_extension_numbers_response?: { base_type_name: string; extension_number: number[] };
  error_response?: { error_code: number; error_message: string };
}

interface FileDescriptor {
  name: string;
  package: string;
  dependency: string[];
  syntax: string;
  messageType: Array<{ name: string; field: Array<{ name: string; typeName?: string }>; nestedType: Array<{ name: string; options?: { mapEntry?: boolean } }> }>;
  service: Array<{ name: string; method: Array<{ name: string; serverStreaming?: boolean }> }>;
  extension: Array<{ name: string }>;
}

/** The files of a file_descriptor_response, the one asked for first; fails on an error response. */
function filesOf(response: ReflectionResponse): FileDescriptor[] {
  assert.equal(response.error_response, undefined, response.error_response?.error_message);
  return (response.file_descriptor_response?.file_descriptor_proto ?? []).map((bytes) => descriptor.FileDescriptorProto.decode(bytes) as unknown as FileDescriptor);
}

/** What a client ends with: the file by its name, then every file its `dependency` lists, by name, transitively. */
async function fileClosure(client: { ask(request: object): Promise<ReflectionResponse> }, name: string): Promise<Map<string, FileDescriptor>> {
  const files = new Map<string, FileDescriptor>();
  const pending = [name];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (files.has(next)) continue;
    const [file] = filesOf(await client.ask({ file_by_filename: next }));
    assert.equal(file?.name, next, `file_by_filename('${next}') answered ${file?.name}`);
    files.set(next, file);
    pending.push(...file.dependency);
  }
  return files;
}

function reflectionClient(version: 'v1' | 'v1alpha', address: string): { ask(request: object): Promise<ReflectionResponse>; close(): void } {
  const definition = loadSync(`grpc/reflection/${version}/reflection.proto`, { keepCase: true, oneofs: true, includeDirs: [REFLECTION_PROTOS] });
  const grpcObject = loadPackageDefinition(definition) as unknown as { grpc: { reflection: Record<string, { ServerReflection: ServiceClientConstructor }> } };
  const Client = grpcObject.grpc.reflection[version]?.ServerReflection;
  assert.ok(Client);
  const client = new Client(address, credentials.createInsecure());
  const call = (client as unknown as { ServerReflectionInfo(): ClientDuplexStream<object, ReflectionResponse> }).ServerReflectionInfo();
  return {
    ask(request) {
      return new Promise((resolve, reject) => {
        call.once('data', resolve);
        call.once('error', reject);
        call.write(request);
      });
    },
    close() {
      call.end();
      client.close();
    },
  };
}

describe('server reflection', SUITE_TIMEOUT, () => {
  let s: GrpcTestServer;
  before(async () => {
    s = await startGrpcTestServer();
  });
  after(() => s.stop());

  for (const version of ['v1', 'v1alpha'] as const) {
    it(`${version}: lists the management service`, async () => {
      const client = reflectionClient(version, s.address);
      const response = await client.ask({ list_services: '*' });
      client.close();
      const names = response.list_services_response?.service.map((svc) => svc.name) ?? [];
      assert.ok(names.includes(MANAGEMENT_SERVICE_NAME), names.join(', '));
    });

    it(`${version}: lists the standard health service and serves its file under its standard path`, async () => {
      const client = reflectionClient(version, s.address);
      const listed = await client.ask({ list_services: '*' });
      const [file] = filesOf(await client.ask({ file_containing_symbol: 'grpc.health.v1.Health' }));
      client.close();
      assert.ok(listed.list_services_response?.service.some((svc) => svc.name === 'grpc.health.v1.Health'));
      assert.equal(file?.name, 'grpc/health/v1/health.proto');
      assert.equal(file.package, 'grpc.health.v1');
      assert.deepEqual(file.service[0]?.method.map((m) => [m.name, m.serverStreaming ?? false]), [['Check', false], ['Watch', true]]);
    });

    it(`${version}: resolves the file declaring the service, with its methods`, async () => {
      const client = reflectionClient(version, s.address);
      const [file] = filesOf(await client.ask({ file_containing_symbol: MANAGEMENT_SERVICE_NAME }));
      client.close();
      assert.equal(file?.name, MANAGEMENT_PROTO_FILE);
      assert.equal(file.package, 'svc.v1');
      assert.equal(file.service[0]?.name, 'ManagementService');
      const methods = file.service[0]?.method ?? [];
      assert.deepEqual(methods.map((m) => m.name).sort(), METHODS);
      assert.equal(methods.find((m) => m.name === 'SubscribeMessages')?.serverStreaming, true);
    });

    // The audit's finding: the file was served as `svc_v1.proto` with no dependencies, so a lookup by name failed.
    it(`${version}: serves the schema under its contract path, with its imports`, async () => {
      const client = reflectionClient(version, s.address);
      const [file] = filesOf(await client.ask({ file_by_filename: MANAGEMENT_PROTO_FILE }));
      client.close();
      assert.equal(file?.name, MANAGEMENT_PROTO_FILE);
      assert.equal(file.package, 'svc.v1');
      assert.equal(file.syntax, 'proto3');
      assert.deepEqual(file.dependency, ['google/api/annotations.proto']);
      assert.deepEqual(file.service[0]?.method.map((m) => m.name).sort(), METHODS);
    });

    it(`${version}: resolves every file the schema imports, by name, by a symbol it declares and by extension`, async () => {
      const client = reflectionClient(version, s.address);
      const files = await fileClosure(client, MANAGEMENT_PROTO_FILE);
      assert.deepEqual([...files.keys()].sort(), [...SCHEMA_FILES].sort());
      assert.deepEqual(files.get('google/api/annotations.proto')?.dependency, ['google/api/http.proto', 'google/protobuf/descriptor.proto']);
      for (const file of files.values()) {
        const declared = file.messageType[0]?.name ?? file.service[0]?.name ?? file.extension[0]?.name;
        assert.ok(declared, `${file.name} declares nothing`);
        const [found] = filesOf(await client.ask({ file_containing_symbol: `${file.package}.${declared}` }));
        assert.equal(found?.name, file.name, `file_containing_symbol('${file.package}.${declared}')`);
      }
      const [extending] = filesOf(await client.ask({ file_containing_extension: HTTP_EXTENSION }));
      const numbers = await client.ask({ all_extension_numbers_of_type: HTTP_EXTENSION.containing_type });
      client.close();
      assert.equal(extending?.name, 'google/api/annotations.proto');
      assert.deepEqual(numbers.all_extension_numbers_response?.extension_number, [HTTP_EXTENSION.extension_number]);
    });

    it(`${version}: the served files rebuild the schema, every message with its fields`, async () => {
      const client = reflectionClient(version, s.address);
      const files = await fileClosure(client, MANAGEMENT_PROTO_FILE);
      client.close();
      // protoc's names, which validators such as protobuf-go's (grpcurl) require: a map's entry type is `<Field>Entry`,
      // descriptor.proto is proto2 (required fields, extension ranges) and declares no field of an extension.
      const message = files.get(MANAGEMENT_PROTO_FILE)?.messageType.find((m) => m.name === 'Message');
      assert.equal(message?.field.find((f) => f.name === 'metadata')?.typeName, 'MetadataEntry');
      assert.deepEqual(message.nestedType.map((n) => [n.name, n.options?.mapEntry]), [['MetadataEntry', true]]);
      const wellKnown = files.get('google/protobuf/descriptor.proto');
      assert.equal(wellKnown?.syntax, 'proto2');
      assert.deepEqual(wellKnown.messageType.find((m) => m.name === 'MethodOptions')?.field.filter((f) => f.name.startsWith('.')), []);

      // Added to Root by protobufjs/ext/descriptor at runtime; its typings omit it.
      const rebuilt = (protobuf.Root as unknown as { fromDescriptor(set: object): protobuf.Root }).fromDescriptor({ file: [...files.values()] });
      const served = loadManagementProto().root.lookup('svc.v1') as protobuf.Namespace;
      // protobufjs rebuilds a map field as the repeated entry message it travels as: both read as (key type, value type).
      const typeOf = (f: protobuf.Field) => f.resolvedType?.fullName ?? f.type;
      const shape = (type: protobuf.Type) =>
        type.fieldsArray.map((f) => {
          const entry = f.resolvedType instanceof protobuf.Type && f.resolvedType.getOption('map_entry') ? f.resolvedType : undefined;
          if (f instanceof protobuf.MapField) return [f.name, f.id, 'map', f.keyType, typeOf(f)];
          if (entry?.fields.key && entry.fields.value) return [f.name, f.id, 'map', entry.fields.key.type, typeOf(entry.fields.value)];
          return [f.name, f.id, f.repeated ? 'repeated' : 'singular', '', typeOf(f)];
        });
      const types = served.nestedArray.filter((object) => object instanceof protobuf.Type);
      assert.ok(types.some((type) => type.name === 'SendMessageRequest'));
      for (const type of types) assert.deepEqual(shape(rebuilt.lookupType(type.fullName)), shape(type), type.fullName);
      assert.deepEqual(Object.keys(rebuilt.lookupService(MANAGEMENT_SERVICE_NAME).methods).sort(), METHODS);
    });

    it(`${version}: every method carries its google.api.http rule, as the REST table has it`, async () => {
      const client = reflectionClient(version, s.address);
      const [bytes] = (await client.ask({ file_by_filename: MANAGEMENT_PROTO_FILE })).file_descriptor_response?.file_descriptor_proto ?? [];
      client.close();
      assert.ok(bytes);
      // A decoder that knows the extension, as a client holding annotations.proto has: field 72295728 of MethodOptions.
      const fileType = loadManagementProto().root.lookupType('google.protobuf.FileDescriptorProto');
      const file = fileType.toObject(fileType.decode(bytes)) as { service: Array<{ method: Array<{ name: string; options?: Record<string, unknown> }> }> };
      const rules = Object.fromEntries((file.service[0]?.method ?? []).map((m) => [m.name, m.options?.['.google.api.http']]));
      assert.deepEqual(rules.DeployAgent, { post: '/api/v1/agents', body: '*' });
      assert.deepEqual(rules.GetAgent, { get: '/api/v1/agents/{agent_id}' });
      assert.deepEqual(rules.UndeployAgent, { delete: '/api/v1/agents/{agent_id}' });
      assert.deepEqual(rules.ListAgents, { get: '/api/v1/agents' });
      assert.deepEqual(rules.SendMessage, {
        post: '/api/v1/messages',
        body: 'message',
        additional_bindings: [{ post: '/api/v1/agents/{message.receiver}/messages', body: 'message' }],
      });
      assert.deepEqual(rules.SubscribeMessages, { get: '/api/v1/messages', additional_bindings: [{ get: '/api/v1/agents/{filter.agent_id}/messages' }] });
      assert.deepEqual(rules.Health, { get: '/api/v1/health' });
      assert.deepEqual(rules.Metrics, { get: '/api/v1/metrics' });
    });

    it(`${version}: resolves a message type, and says NOT_FOUND for an unknown symbol`, async () => {
      const client = reflectionClient(version, s.address);
      const found = await client.ask({ file_containing_symbol: 'svc.v1.Error' });
      const missing = await client.ask({ file_containing_symbol: 'svc.v1.NoSuchThing' });
      client.close();
      assert.ok((found.file_descriptor_response?.file_descriptor_proto.length ?? 0) > 0);
      assert.equal(missing.error_response?.error_code, 5);
    });
  }
});
