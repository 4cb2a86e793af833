import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadManagementProto, MANAGEMENT_PROTO_FILE, MANAGEMENT_SERVICE_NAME, PROTO_DIR } from '../../src/api/proto.js';

describe('the management schema', () => {
  it('is found from the source tree', () => {
    assert.ok(existsSync(join(PROTO_DIR, MANAGEMENT_PROTO_FILE)));
  });

  it('defines the service with its eight RPCs, for grpc-js and for protobufjs alike', () => {
    const proto = loadManagementProto();
    const rpcs = ['DeployAgent', 'UndeployAgent', 'ListAgents', 'GetAgent', 'SendMessage', 'SubscribeMessages', 'Health', 'Metrics'];
    assert.deepEqual(Object.keys(proto.service.methods).sort(), [...rpcs].sort());
    const definition = proto.packageDefinition[MANAGEMENT_SERVICE_NAME] as Record<string, { responseStream: boolean }>;
    assert.deepEqual(Object.keys(definition).sort(), [...rpcs].sort());
    assert.equal(definition.SubscribeMessages?.responseStream, true);
  });

  it('keeps snake_case field names', () => {
    assert.ok(loadManagementProto().messageType('DeployAgentRequest').fields.wasm_module);
  });

  it('loads once', () => {
    assert.equal(loadManagementProto(), loadManagementProto());
  });

  it('round-trips an Error, metadata included', () => {
    const proto = loadManagementProto();
    const error = { code: 'INVALID_MODULE', message: 'forbidden import', trace_id: 'abc', metadata: { reason: 'forbidden_import', import: 'env.abort' } };
    assert.deepEqual(proto.decodeError(proto.encodeError(error)), error);
  });

  it('decodes an empty Error to its defaults', () => {
    assert.deepEqual(loadManagementProto().decodeError(new Uint8Array()), { code: '', message: '', trace_id: '', metadata: {} });
  });

  it('refuses an unknown message name', () => {
    assert.throws(() => loadManagementProto().messageType('NoSuchThing'));
  });
});
