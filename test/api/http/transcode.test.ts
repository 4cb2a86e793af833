import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadManagementProto } from '../../../src/api/proto.js';
import { deriveRoutes, type HttpRoute } from '../../../src/api/http/routes.js';
import { transcode } from '../../../src/api/http/transcode.js';
import { SvcError } from '../../../src/errors/svc-error.js';

const routes = deriveRoutes(loadManagementProto().service);
const route = (id: string): HttpRoute => routes.find((r) => r.operationId === id)!;

function refuses(fn: () => unknown, field: string, reason: string): void {
  assert.throws(fn, (err: unknown) => err instanceof SvcError && err.code === 'INVALID_ARGUMENT' && err.metadata.field === field && err.metadata.reason === reason);
}

test('the body field, then the path variable that fills a field inside it', () => {
  const request = transcode(route('SendMessage2'), { params: { message_receiver: 'agent-1' }, query: {}, body: { messageType: 'inform', content: 'hi' } });
  assert.deepEqual(request, { message: { message_type: 'inform', content: 'hi', receiver: 'agent-1' } });
});

test('a body that names another value for a path-bound field is refused, not rewritten', () => {
  refuses(() => transcode(route('SendMessage2'), { params: { message_receiver: 'a' }, query: {}, body: { receiver: 'b' } }), 'receiver', 'path_mismatch');
  assert.deepEqual(transcode(route('SendMessage2'), { params: { message_receiver: 'a' }, query: {}, body: { receiver: 'a' } }), { message: { receiver: 'a' } });
});

test('errors in a body field name fields as written in the body', () => {
  refuses(() => transcode(route('SendMessage'), { params: {}, query: {}, body: { recipient: 'x' } }), 'recipient', 'unknown_field');
  refuses(() => transcode(route('SendMessage'), { params: {}, query: {}, body: [] }), 'body', 'wrong_type');
});

test('query parameters fill nested fields by leaf name, dotted path or lowerCamelCase', () => {
  const subscribe = route('SubscribeMessages');
  assert.deepEqual(transcode(subscribe, { params: {}, query: { agent_id: 'a', message_types: 'inform,request' } }), { filter: { agent_id: 'a', message_types: ['inform', 'request'] } });
  assert.deepEqual(transcode(subscribe, { params: {}, query: { 'filter.messageTypes': ['cfp', 'agree'] } }), { filter: { message_types: ['cfp', 'agree'] } });
  assert.deepEqual(transcode(route('SubscribeMessages2'), { params: { filter_agent_id: 'x' }, query: { messageTypes: 'inform' } }), { filter: { message_types: ['inform'], agent_id: 'x' } });
  assert.deepEqual(transcode(route('ListAgents'), { params: {}, query: { pageSize: '10', page_token: '' } }), { page_size: 10 });
});

test('unknown query parameters, two spellings of one field and repeated singular values are refused', () => {
  refuses(() => transcode(route('ListAgents'), { params: {}, query: { limit: '5' } }), 'limit', 'unknown_field');
  refuses(() => transcode(route('SubscribeMessages2'), { params: { filter_agent_id: 'x' }, query: { agent_id: 'y' } }), 'agent_id', 'unknown_field');
  refuses(() => transcode(route('ListAgents'), { params: {}, query: { page_size: '5', pageSize: '6' } }), 'pageSize', 'duplicate_field');
  refuses(() => transcode(route('ListAgents'), { params: {}, query: { page_size: ['5', '6'] } }), 'page_size', 'duplicate_field');
  refuses(() => transcode(route('ListAgents'), { params: {}, query: { page_size: '-1' } }), 'page_size', 'out_of_range');
  // The whole request is the body: nothing may come from the query.
  refuses(() => transcode(route('DeployAgent'), { params: {}, query: { name: 'x' }, body: {} }), 'name', 'unknown_field');
});

test('a route without a body ignores whatever body came along', () => {
  assert.deepEqual(transcode(route('GetAgent'), { params: { agent_id: 'a' }, query: {}, body: { junk: 1 } }), { agent_id: 'a' });
});
