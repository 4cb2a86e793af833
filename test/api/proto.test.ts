import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { loadManagementProto, MANAGEMENT_PROTO_FILE, MANAGEMENT_SERVICE_NAME, PROTO_DIR, PROTO_PACKAGE } from '../../src/api/proto.js';

/** The schema with its `//` comments: protobufjs keeps only doc comments (`/**` blocks, `///` lines) unless told otherwise. */
function commentedRoot(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (existsSync(join(PROTO_DIR, target)) ? join(PROTO_DIR, target) : target);
  root.loadSync(MANAGEMENT_PROTO_FILE, { keepCase: true, alternateCommentMode: true });
  return root;
}

interface Declaration {
  name: string;
  comment: string | null | undefined;
}

/** Everything declared in `ns` a reader needs explained (messages, fields, enums and their values, services, RPCs), by full name. */
function declarations(ns: protobuf.NamespaceBase): Declaration[] {
  return ns.nestedArray.flatMap((item) => {
    const own: Declaration[] = [{ name: item.fullName.slice(1), comment: item.comment }];
    if (item instanceof protobuf.Type) own.push(...item.fieldsArray.map((f) => ({ name: f.fullName.slice(1), comment: f.comment })));
    if (item instanceof protobuf.Enum) own.push(...Object.keys(item.values).map((v) => ({ name: `${item.fullName.slice(1)}.${v}`, comment: item.comments[v] })));
    if (item instanceof protobuf.Service) own.push(...item.methodsArray.map((m) => ({ name: m.fullName.slice(1), comment: m.comment })));
    return item instanceof protobuf.Namespace ? [...own, ...declarations(item)] : own;
  });
}

describe('the management schema', () => {
  it('is found from the source tree', () => {
    assert.ok(existsSync(join(PROTO_DIR, MANAGEMENT_PROTO_FILE)));
  });

  it('defines the service with its RPCs, for grpc-js and for protobufjs alike', () => {
    const proto = loadManagementProto();
    const agents = ['DeployAgent', 'UndeployAgent', 'ListAgents', 'GetAgent', 'RestartAgent', 'UpdateAgent', 'SendMessage', 'CallAgent', 'SubscribeMessages', 'GetAgentLogs', 'FollowAgentLogs', 'Health', 'Metrics', 'ListMembers'];
    const security = ['CreateToken', 'RefreshToken', 'Login', 'LoginCallback', 'CreateKey', 'ListKeys', 'RevokeKey', 'RotateKey', 'ListAudit', 'GetSystemConfig', 'SetLockdown'];
    const rpcs = [...agents, ...security];
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

  it('documents every message, field, enum value, service and RPC (issue 4)', () => {
    const pkg = commentedRoot().lookup(PROTO_PACKAGE);
    assert.ok(pkg instanceof protobuf.Namespace, `package ${PROTO_PACKAGE}`);
    const all = declarations(pkg);
    assert.ok(all.some((d) => d.name === 'svc.v1.MessageFilter.agent_id'), 'the walk reaches the fields');
    const missing = all.filter((d) => !d.comment?.trim()).map((d) => d.name);
    assert.deepEqual(missing, [], `no comment in proto/${MANAGEMENT_PROTO_FILE}`);
  });

  it('refuses an unknown message name', () => {
    assert.throws(() => loadManagementProto().messageType('NoSuchThing'));
  });
});
