/**
 * What the dashboard offers from a server's OpenAPI document
 * (dashboard/lib/features.js): nothing optional from this server's own
 * document, and each later operation once a document lists it, found by its
 * RPC name or its path, with the method, path and body fields to call it by.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { featuresOf, NO_FEATURES, throttledSeconds } from '../../dashboard/lib/features.js';
import { startGateway, type Gateway } from '../api/http/http-fixtures.js';

type Doc = { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, { properties?: Record<string, unknown> }> } };

/** This server's document with more operations and Agent fields, as later versions of the API add them. */
function extended(base: Doc, paths: Record<string, Record<string, unknown>>, agentFields: Record<string, unknown> = {}): Doc {
  const doc = structuredClone(base);
  for (const [path, item] of Object.entries(paths)) doc.paths[path] = { ...(doc.paths[path] ?? {}), ...item };
  const agent = doc.components.schemas.Agent;
  assert.ok(agent?.properties);
  Object.assign(agent.properties, agentFields);
  return doc;
}

describe('features of an API document', () => {
  let gw: Gateway;
  let doc: Doc;
  before(async () => {
    gw = await startGateway();
    doc = (await (await fetch(`${gw.base}/api/v1/openapi.json`)).json()) as Doc;
  });
  after(() => gw.stop());

  it('this server document: the browser login, RestartAgent, UpdateAgent, the log lines, the cluster members and the throttled time', () => {
    assert.deepEqual(featuresOf(doc), {
      login: true,
      restart: { method: 'POST', path: '/api/v1/agents/{agent_id}/restart', bodyFields: [] },
      update: { method: 'PATCH', path: '/api/v1/agents/{agent_id}', bodyFields: ['agent_id', 'wasm_module', 'capabilities', 'resources', 'keep_state', 'rollback_window'] },
      logs: { method: 'GET', path: '/api/v1/agents/{agent_id}/logs', bodyFields: [] },
      cluster: { method: 'GET', path: '/api/v1/cluster/members', bodyFields: [] },
      throttledField: 'throttled_seconds',
      logsFollow: { method: 'GET', path: '/api/v1/agents/{agent_id}/logs/follow', bodyFields: [] },
    });
  });

  it('finds RestartAgent and UpdateAgent by name, with where to call them and the update body fields', () => {
    const before = structuredClone(doc);
    delete before.paths['/api/v1/agents/{agent_id}/restart'];
    const later = extended(before, {
      '/api/v1/agents/{agent_id}:restart': { post: { operationId: 'RestartAgent' } },
      '/api/v1/agents/{agent_id}': {
        patch: { operationId: 'UpdateAgent', requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/UpdateAgentRequest' } } } } },
      },
    });
    later.components.schemas.UpdateAgentRequest = { properties: { agent_id: {}, wasm_module: {}, keep_state: {} } };
    const features = featuresOf(later);
    assert.deepEqual(features.restart, { method: 'POST', path: '/api/v1/agents/{agent_id}:restart', bodyFields: [] });
    assert.deepEqual(features.update, { method: 'PATCH', path: '/api/v1/agents/{agent_id}', bodyFields: ['agent_id', 'wasm_module', 'keep_state'] });
  });

  it('finds an update by its method and path when it has another name, and inline body schemas', () => {
    const before = structuredClone(doc);
    delete before.paths['/api/v1/agents/{agent_id}']?.patch;
    const later = extended(before, {
      '/api/v1/agents/{id}': { patch: { operationId: 'PatchAgent', requestBody: { content: { 'application/json': { schema: { properties: { wasm_module: {} } } } } } } },
    });
    assert.deepEqual(featuresOf(later).update, { method: 'PATCH', path: '/api/v1/agents/{id}', bodyFields: ['wasm_module'] });
  });

  it('finds the log lines, the cluster members and the browser login by their paths', () => {
    const later = extended(doc, {
      '/api/v1/agents/{agent_id}/logs': { get: { operationId: 'GetAgentLogs' } },
      '/api/v1/cluster/members': { get: { operationId: 'ListMembers' } },
      '/api/v1/auth/login': { get: { operationId: 'Login' } },
    });
    const features = featuresOf(later);
    assert.deepEqual(features.logs, { method: 'GET', path: '/api/v1/agents/{agent_id}/logs', bodyFields: [] });
    assert.deepEqual(features.cluster, { method: 'GET', path: '/api/v1/cluster/members', bodyFields: [] });
    assert.equal(features.login, true);
  });

  it('ignores look-alikes: other methods, deeper paths, a POST login', () => {
    const withoutLogin = structuredClone(doc);
    delete withoutLogin.paths['/api/v1/auth/login'];
    delete withoutLogin.paths['/api/v1/cluster/members'];
    delete withoutLogin.paths['/api/v1/agents/{agent_id}/restart'];
    delete withoutLogin.paths['/api/v1/agents/{agent_id}/logs'];
    delete withoutLogin.paths['/api/v1/agents/{agent_id}/logs/follow'];
    delete withoutLogin.paths['/api/v1/agents/{agent_id}']?.patch;
    const later = extended(withoutLogin, {
      '/api/v1/agents/{agent_id}/logs/{line}': { get: {} },
      '/api/v1/agents/{agent_id}/logs': { post: {} },
      '/api/v1/cluster/members': { post: {} },
      '/api/v1/auth/login': { post: {} },
      '/api/v1/agents/{agent_id}/messages': { patch: {} },
    });
    // The paths are look-alikes; the Agent schema (and its throttled field) is this server's own.
    assert.deepEqual(featuresOf(later), { login: false, throttledField: 'throttled_seconds' });
  });

  it('names the Agent field holding the throttled time', () => {
    assert.equal(featuresOf(extended(doc, {}, { throttled_seconds: { type: 'number' } })).throttledField, 'throttled_seconds');
  });

  it('reads a document that is not one as offering nothing optional, the login offered in case', () => {
    for (const bad of [undefined, null, 'text', 42, [], {}, { paths: 'x' }, { paths: { '/a': 'x' } }, { components: { schemas: { Agent: { $ref: '#/nowhere' } } } }]) {
      const features = featuresOf(bad);
      assert.equal(features.restart ?? features.update ?? features.logs ?? features.cluster ?? features.throttledField, undefined, JSON.stringify(bad));
    }
    assert.deepEqual(featuresOf(undefined), NO_FEATURES);
  });
});

describe('throttledSeconds', () => {
  const table: Array<[string, unknown, number | undefined]> = [
    ['throttled_seconds', 1.5, 1.5],
    ['throttled_ms', 1500, 1.5],
    ['throttled_us', 2_000_000, 2],
    ['throttled_ns', 3e9, 3],
    ['throttled_time', 4, 4],
    ['throttled_ms', '250', 0.25],
    ['throttled_ms', '', undefined],
    ['throttled_ms', 'soon', undefined],
    ['throttled_ms', null, undefined],
    ['throttled_ms', undefined, undefined],
    ['throttled_ms', Infinity, undefined],
  ];
  for (const [field, value, seconds] of table) {
    it(`${field} = ${JSON.stringify(value)} → ${seconds}`, () => {
      assert.equal(throttledSeconds(value === undefined ? {} : { [field]: value }, field), seconds);
    });
  }
});
