import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { loadManagementProto } from '../../../src/api/proto.js';
import { ALL_BINDINGS, bindingFor } from '../../../src/api/http/api-router.js';
import { buildOpenApi } from '../../../src/api/http/openapi.js';
import { deriveRoutes } from '../../../src/api/http/routes.js';

const proto = loadManagementProto();
const routes = deriveRoutes(proto.service);
const doc = buildOpenApi(proto.service, routes, { version: '9.9.9', bindingFor: (r) => bindingFor(r) });
type Operation = { operationId: string; summary: string; description?: string; parameters: Array<Record<string, unknown>>; requestBody?: { content: Record<string, { schema: unknown }> }; responses: Record<string, unknown> };
const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, ...(op as unknown as Operation) })));
const op = (id: string) => operations.find((o) => o.operationId === id)!;

test('the document is valid OpenAPI 3.1', async () => {
  const result = await new Validator().validate(structuredClone(doc));
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  assert.equal(doc.openapi, '3.1.0');
});

test('every route of the schema is one operation, under its method and path', () => {
  assert.deepEqual(operations.map((o) => o.operationId).sort(), routes.map((r) => r.operationId).sort());
  for (const route of routes) {
    const found = op(route.operationId);
    assert.equal(found.method, route.method.toLowerCase());
    assert.equal(found.path.replace(/\{[^}]+\}/g, '{}'), route.template.replace(/\{[^}]+\}/g, '{}'));
  }
});

test('one path, one variable name: /agents/{agent_id}/messages for both its GET and its POST', () => {
  assert.deepEqual(Object.keys(doc.paths).sort(), [
    '/api/v1/agents',
    '/api/v1/agents/{agent_id}',
    '/api/v1/agents/{agent_id}/call',
    '/api/v1/agents/{agent_id}/logs',
    '/api/v1/agents/{agent_id}/logs/follow',
    '/api/v1/agents/{agent_id}/messages',
    '/api/v1/agents/{agent_id}/restart',
    '/api/v1/audit',
    '/api/v1/auth/callback',
    '/api/v1/auth/login',
    '/api/v1/auth/refresh',
    '/api/v1/auth/token',
    '/api/v1/cluster/members',
    '/api/v1/health',
    '/api/v1/keys',
    '/api/v1/keys/{key_id}',
    '/api/v1/keys/{key_id}/rotate',
    '/api/v1/messages',
    '/api/v1/metrics',
    '/api/v1/system/config',
    '/api/v1/system/lockdown',
  ]);
  const post = op('SendMessage2').parameters.find((p) => p.in === 'path');
  assert.deepEqual(post, { name: 'agent_id', in: 'path', required: true, description: 'Fills message.receiver.', schema: { type: 'string' } });
});

test('a schema for every message of the package, Error included', () => {
  const schemas = (doc.components as { schemas: Record<string, { properties: Record<string, unknown> }> }).schemas;
  const messages = proto.root.lookup('svc.v1')!.toJSON().nested as Record<string, { fields?: unknown }>;
  assert.deepEqual(Object.keys(schemas).sort(), Object.entries(messages).filter(([, v]) => v.fields !== undefined).map(([k]) => k).sort());
  assert.deepEqual(Object.keys(schemas.Error!.properties), ['code', 'message', 'trace_id', 'metadata']);
  assert.deepEqual(schemas.DeployAgentRequest!.properties.wasm_module, {
    type: 'string',
    contentEncoding: 'base64',
    description: 'The WebAssembly module (base64 in JSON), at most runtime.max_module_size bytes.',
  });
  assert.deepEqual((schemas.Message!.properties.metadata as { additionalProperties: unknown }).additionalProperties, { type: 'string' });
  assert.equal(((schemas.Message!.properties.message_type as { enum: string[] }).enum).length, 22);
});

test('parameters, bodies and statuses of each operation', () => {
  assert.deepEqual(op('ListAgents').parameters.filter((p) => p.in === 'query').map((p) => p.name), ['page_size', 'page_token']);
  const types = op('SubscribeMessages').parameters.find((p) => p.name === 'message_types')!;
  assert.deepEqual([types.style, types.explode], ['form', false]);
  assert.deepEqual(op('DeployAgent').requestBody?.content['application/json']?.schema, { $ref: '#/components/schemas/DeployAgentRequest' });
  assert.equal((op('SendMessage').requestBody?.content['application/json']?.schema as { $ref: string }).$ref, '#/components/schemas/Message');
  for (const route of routes) assert.ok(String(ALL_BINDINGS[route.rpc]!.status) in op(route.operationId).responses, route.operationId);
  assert.ok('201' in op('DeployAgent').responses && '422' in op('DeployAgent').responses && '413' in op('DeployAgent').responses);
  assert.ok('202' in op('SendMessage2').responses && '404' in op('SendMessage2').responses);
  assert.ok('101' in op('SubscribeMessages').responses);
  for (const o of operations) {
    assert.ok('400' in o.responses && 'default' in o.responses, o.operationId);
    assert.deepEqual(o.parameters[0], { $ref: '#/components/parameters/TraceId' });
  }
});

test('descriptions come from the schema\'s comments: every message, field and operation has one, and a summary is one sentence', () => {
  const schemas = (doc.components as { schemas: Record<string, { description?: string; properties: Record<string, { description?: string }> }> }).schemas;
  for (const [name, schema] of Object.entries(schemas)) {
    assert.ok(schema.description, `${name} has a description`);
    for (const [field, property] of Object.entries(schema.properties)) assert.ok(property.description, `${name}.${field} has a description`);
  }
  assert.match(schemas.Message!.properties.message_type!.description ?? '', /^A FIPA performative: accept-proposal, /);
  for (const o of operations) {
    assert.ok(o.description?.endsWith(`(RPC ManagementService.${routes.find((r) => r.operationId === o.operationId)!.rpc})`), o.operationId);
    assert.match(o.summary, /^[A-Z][^.]*\.$/, `${o.operationId}: ${o.summary}`);
  }
  assert.equal(op('SubscribeMessages').summary, 'Live messages matching the filter.');
});
