/**
 * The dashboard's API client (dashboard/lib/api.js) against a real server
 * over loopback, with Node's fetch: each call it makes, failures as ApiError
 * carrying the API's Error body, an unreachable server, and the key kept in
 * its storage (here an in-memory one with sessionStorage's methods).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { API_KEY_STORAGE, ApiError, createApi, fillPath, type Api } from '../../dashboard/lib/api.js';
import { bytesToBase64 } from '../../dashboard/lib/base64.js';
import { ECHO_WASM, eventually, startGateway, type Gateway } from '../api/http/http-fixtures.js';

function memoryStorage(): Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> {
  const items = new Map<string, string>();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  };
}

async function failure(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    return err;
  }
  throw new Error('the call succeeded');
}

describe('dashboard API client', () => {
  let gw: Gateway;
  let api: Api;
  before(async () => {
    gw = await startGateway();
    api = createApi({ fetch, storage: memoryStorage(), base: gw.base });
  });
  after(() => gw.stop());

  it('deploys, lists, reads, messages, reads the history and the metrics, and undeploys', async () => {
    const { agent_id } = await api.deploy({ name: 'echo-api', wasm_module: bytesToBase64(new Uint8Array(ECHO_WASM)), capabilities: ['demo'] });
    const { agents, truncated } = await api.listAgents();
    assert.deepEqual([agents.map((a) => a.name), truncated], [['echo-api'], false]);
    assert.deepEqual((await api.getAgent(agent_id)).capabilities, ['demo']);
    const { message_id } = await api.send(agent_id, { message_type: 'request', content: 'hi', reply_with: 'r1' });
    const history = await eventually(async () => {
      const messages = await api.recentMessages(agent_id);
      return messages.length >= 2 ? messages : undefined;
    });
    assert.equal(history[0]?.message_id, message_id);
    assert.deepEqual([history[1]?.in_reply_to, history[1]?.content], ['r1', 'hi']);
    assert.ok((await api.metrics()).some((s) => s.name === 'svc_messages_sent_total'));
    assert.equal(typeof (await api.openApi()), 'object');
    await api.undeploy(agent_id);
    assert.deepEqual((await api.listAgents()).agents, []);
  });

  it('a failure is an ApiError with the status, code, message, metadata and trace id of the Error body', async () => {
    const missing = await failure(api.getAgent('nope'));
    assert.deepEqual([missing.status, missing.code], [404, 'NOT_FOUND']);
    assert.match(missing.message, /nope/);
    assert.match(missing.traceId, /^[0-9a-f]{32}$/);
    const invalid = await failure(api.deploy({ name: 'bad', wasm_module: bytesToBase64(new TextEncoder().encode('not wasm')) }));
    assert.deepEqual([invalid.status, invalid.code], [422, 'INVALID_MODULE']);
    const refused = await failure(api.send('nope', { message_type: 'shout', content: 'x' }));
    assert.deepEqual([refused.status, refused.code, refused.metadata.field], [400, 'INVALID_ARGUMENT', 'message_type']);
    const viaTemplate = await failure(api.request('DELETE', fillPath('/api/v1/agents/{agent_id}', 'a/b')));
    assert.deepEqual([viaTemplate.status, viaTemplate.code], [404, 'NOT_FOUND']);
  });

  it('an unreachable server is status 0, UNAVAILABLE', async () => {
    const closed = await startGateway();
    const base = closed.base;
    await closed.stop();
    const err = await failure(createApi({ fetch, storage: memoryStorage(), base }).listAgents());
    assert.deepEqual([err.status, err.code], [0, 'UNAVAILABLE']);
  });

  it('keeps the API key in its storage, trimmed, until cleared', async () => {
    const storage = memoryStorage();
    const keyed = createApi({ fetch, storage, base: gw.base });
    assert.equal(keyed.apiKey(), null);
    keyed.setApiKey('  svc_abc_def \n');
    assert.equal(storage.getItem(API_KEY_STORAGE), 'svc_abc_def');
    assert.deepEqual((await keyed.listAgents()).agents, []);
    keyed.clearApiKey();
    assert.equal(keyed.apiKey(), null);
  });

  it('fills an operation path with an agent id, encoded', () => {
    assert.equal(fillPath('/api/v1/agents/{agent_id}:restart', 'a b/c'), '/api/v1/agents/a%20b%2Fc:restart');
  });
});
