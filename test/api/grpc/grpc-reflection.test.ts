/**
 * Server reflection, as a generic client (grpcurl, Postman) uses it: a
 * grpc-js client of `grpc.reflection.v1.ServerReflection` and of the older
 * v1alpha lists the services and resolves the file descriptor of the
 * management service, from which the service and its methods can be read.
 */
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { credentials, loadPackageDefinition, type ClientDuplexStream, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { MANAGEMENT_SERVICE_NAME } from '../../../src/api/proto.js';
import { startGrpcTestServer, SUITE_TIMEOUT, type GrpcTestServer } from './grpc-harness.js';

// The protos ship with @grpc/reflection: build/src/index.js → build/proto/.
const REFLECTION_PROTOS = join(dirname(dirname(fileURLToPath(import.meta.resolve('@grpc/reflection')))), 'proto');

interface ReflectionResponse {
  message_response: string;
  list_services_response?: { service: Array<{ name: string }> };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  error_response?: { error_code: number; error_message: string };
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

    it(`${version}: resolves the file declaring the service, with its eight methods`, async () => {
      const client = reflectionClient(version, s.address);
      const response = await client.ask({ file_containing_symbol: MANAGEMENT_SERVICE_NAME });
      client.close();
      const files = (response.file_descriptor_response?.file_descriptor_proto ?? []).map((bytes) => descriptor.FileDescriptorProto.decode(bytes) as unknown as {
        name: string;
        package: string;
        service: Array<{ name: string; method: Array<{ name: string; serverStreaming?: boolean }> }>;
      });
      const file = files.find((f) => f.service.some((svc) => svc.name === 'ManagementService'));
      assert.ok(file, `no file declares the service among ${files.map((f) => f.name).join(', ')}`);
      assert.equal(file.package, 'svc.v1');
      const methods = file.service[0]?.method ?? [];
      assert.deepEqual(methods.map((m) => m.name).sort(), ['DeployAgent', 'GetAgent', 'Health', 'ListAgents', 'Metrics', 'SendMessage', 'SubscribeMessages', 'UndeployAgent']);
      assert.equal(methods.find((m) => m.name === 'SubscribeMessages')?.serverStreaming, true);
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
