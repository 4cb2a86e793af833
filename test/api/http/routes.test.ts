import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadManagementProto } from '../../../src/api/proto.js';
import { allowedMethods, deriveRoutes, findRoute, httpRules, type HttpRoute } from '../../../src/api/http/routes.js';
import { inlineService } from './inline-proto.js';

const routes = deriveRoutes(loadManagementProto().service);

function route(operationId: string): HttpRoute {
  const found = routes.find((r) => r.operationId === operationId);
  assert.ok(found, `no route ${operationId}`);
  return found;
}

const summary = (r: HttpRoute) => ({
  method: r.method,
  template: r.template,
  routerPath: r.routerPath,
  body: r.body,
  pathParams: r.pathParams.map((p) => `${p.name}=${p.path.join('.')}`),
  query: r.queryParams.map((q) => q.name),
  streaming: r.streaming,
});

test('every RPC of the schema gets the routes of the REST table', () => {
  assert.deepEqual(
    routes.map((r) => `${r.operationId} ${r.method} ${r.template}`),
    [
      'DeployAgent POST /api/v1/agents',
      'UndeployAgent DELETE /api/v1/agents/{agent_id}',
      'ListAgents GET /api/v1/agents',
      'GetAgent GET /api/v1/agents/{agent_id}',
      'UpdateAgent PATCH /api/v1/agents/{agent_id}',
      'RestartAgent POST /api/v1/agents/{agent_id}/restart',
      'SendMessage POST /api/v1/messages',
      'SendMessage2 POST /api/v1/agents/{message.receiver}/messages',
      'CallAgent POST /api/v1/agents/{message.receiver}/call',
      'SubscribeMessages GET /api/v1/messages',
      'SubscribeMessages2 GET /api/v1/agents/{filter.agent_id}/messages',
      'GetAgentLogs GET /api/v1/agents/{agent_id}/logs',
      'FollowAgentLogs GET /api/v1/agents/{agent_id}/logs/follow',
      'Health GET /api/v1/health',
      'Metrics GET /api/v1/metrics',
      'ListMembers GET /api/v1/cluster/members',
      'CreateToken POST /api/v1/auth/token',
      'RefreshToken POST /api/v1/auth/refresh',
      'Login GET /api/v1/auth/login',
      'LoginCallback GET /api/v1/auth/callback',
      'CreateKey POST /api/v1/keys',
      'ListKeys GET /api/v1/keys',
      'RevokeKey DELETE /api/v1/keys/{key_id}',
      'RotateKey POST /api/v1/keys/{key_id}/rotate',
      'ListAudit GET /api/v1/audit',
      'GetSystemConfig GET /api/v1/system/config',
      'SetLockdown PUT /api/v1/system/lockdown',
    ],
  );
});

test('body mapping, path variables and query parameters follow each rule', () => {
  assert.deepEqual(summary(route('DeployAgent')), {
    method: 'POST', template: '/api/v1/agents', routerPath: '/api/v1/agents', body: '*', pathParams: [], query: [], streaming: false,
  });
  assert.deepEqual(summary(route('ListAgents')).query, ['page_size', 'page_token']);
  assert.deepEqual(summary(route('SendMessage2')), {
    method: 'POST',
    template: '/api/v1/agents/{message.receiver}/messages',
    routerPath: '/api/v1/agents/:message_receiver/messages',
    body: 'message',
    pathParams: ['message_receiver=message.receiver'],
    query: [],
    streaming: false,
  });
  // The leaf names of the REST table, since no other query field shares them.
  assert.deepEqual(summary(route('SubscribeMessages')).query, ['agent_id', 'message_types']);
  assert.equal(summary(route('SubscribeMessages')).streaming, true);
  assert.deepEqual(summary(route('SubscribeMessages2')).query, ['message_types']);
  assert.deepEqual(summary(route('SubscribeMessages2')).pathParams, ['filter_agent_id=filter.agent_id']);
});

test('query parameters accept the dotted path and lowerCamelCase', () => {
  const types = route('SubscribeMessages').queryParams.find((q) => q.name === 'message_types');
  assert.deepEqual(types?.aliases, ['message_types', 'filter.message_types', 'messageTypes', 'filter.messageTypes']);
  assert.deepEqual(route('ListAgents').queryParams[0]?.aliases, ['page_size', 'pageSize']);
});

test('match decodes variables, tolerates one trailing slash and refuses anything else', () => {
  const get = route('GetAgent');
  assert.deepEqual(get.match('/api/v1/agents/a%20b'), { agent_id: 'a b' });
  assert.deepEqual(get.match('/api/v1/agents/abc/'), { agent_id: 'abc' });
  assert.equal(get.match('/api/v1/agents/'), undefined);
  assert.equal(get.match('/api/v1/agents'), undefined);
  assert.equal(get.match('/api/v1/agents/a/b'), undefined);
  assert.equal(get.match('/api/v2/agents/a'), undefined);
  assert.equal(get.match('/api/v1/agents/%E0%A4%A'), undefined);
});

test('findRoute picks by method (HEAD as GET); allowedMethods lists a path methods', () => {
  assert.equal(findRoute(routes, 'DELETE', '/api/v1/agents/x')?.route.rpc, 'UndeployAgent');
  assert.equal(findRoute(routes, 'HEAD', '/api/v1/agents/x')?.route.rpc, 'GetAgent');
  assert.equal(findRoute(routes, 'POST', '/api/v1/agents/x/messages')?.params.message_receiver, 'x');
  assert.equal(findRoute(routes, 'PUT', '/api/v1/agents/x'), undefined);
  assert.deepEqual(allowedMethods(routes, '/api/v1/agents/x'), ['DELETE', 'GET', 'PATCH']);
  assert.deepEqual(allowedMethods(routes, '/api/v1/agents/x/messages'), ['GET', 'POST']);
  assert.deepEqual(allowedMethods(routes, '/nowhere'), []);
});

const MESSAGES = 'message Inner { string id = 1; repeated string tags = 2; } message R { string name = 1; Inner inner = 2; uint32 n = 3; map<string, string> m = 4; repeated Inner items = 5; } message Self { Self next = 1; string leaf = 2; }';

function rpc(options: string, request = 'R'): string {
  return `service S { rpc A(${request}) returns (R) { option (google.api.http) = { ${options} }; } } ${MESSAGES}`;
}

test('several additional bindings come as an array, one as an object: both are read', () => {
  const service = inlineService(rpc('get: "/a" additional_bindings { post: "/b" body: "*" } additional_bindings { custom: { kind: "PATCH" path: "/c/{name}" } body: "inner" }'));
  assert.equal(httpRules(service.methods.A as never).length, 3);
  assert.deepEqual(deriveRoutes(service).map((r) => `${r.operationId} ${r.method} ${r.template} ${r.body ?? '-'}`), ['A GET /a -', 'A2 POST /b *', 'A3 PATCH /c/{name} inner']);
});

test('query parameters: leaves through singular messages; maps, repeated messages and self-reference left out', () => {
  const service = inlineService(rpc('get: "/a/{inner.id}"'));
  assert.deepEqual(deriveRoutes(service)[0]?.queryParams.map((q) => q.name), ['name', 'tags', 'n']);
  const self = inlineService(rpc('get: "/s"', 'Self'));
  assert.deepEqual(deriveRoutes(self)[0]?.queryParams.map((q) => q.name), ['leaf']);
});

test('a body field is not a query parameter', () => {
  const service = inlineService(rpc('post: "/a" body: "inner"'));
  assert.deepEqual(deriveRoutes(service)[0]?.queryParams.map((q) => q.name), ['name', 'n']);
});

test('an RPC without a rule is gRPC-only', () => {
  assert.deepEqual(deriveRoutes(inlineService(`service S { rpc A(R) returns (R); } ${MESSAGES}`)), []);
});

test('rules the gateway cannot serve stop the start, naming the RPC and the problem', () => {
  const cases: Array<[string, RegExp]> = [
    ['get: "/a/{name=things/*}"', /unsupported template segment "\{name=things"/],
    ['get: "/a/**"', /unsupported template segment "\*\*"/],
    ['get: "/a/{name}:run"', /unsupported template segment/],
    ['get: "/a/{nope}"', /R has no field nope/],
    ['get: "/a/{inner}"', /path variable inner must be a singular scalar field/],
    ['get: "/a/{m}"', /path variable m must be a singular scalar field/],
    ['get: "/a/{name.x}"', /name.x does not lead through a message field/],
    ['get: "/a" body: "*"', /GET cannot carry a body/],
    ['post: "/a" body: "nope"', /body names no field of R: nope/],
    ['get: "a"', /must start with \//],
    ['custom: { kind: "TRACE" path: "/a" }', /unsupported method TRACE/],
    ['get: "/a" additional_bindings { get: "/a" }', /duplicates a route of A/],
  ];
  for (const [options, message] of cases) {
    assert.throws(() => deriveRoutes(inlineService(rpc(options))), (err: Error) => err.message.startsWith('google.api.http rule of A:') && message.test(err.message), options);
  }
});
