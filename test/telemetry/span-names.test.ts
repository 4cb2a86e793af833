/**
 * Issue 5: span names are a public contract (dashboards and trace queries are
 * built on them). The other tests compare spans against the constants of
 * span-names.ts, so a renamed value would pass them; here every name is
 * spelled out, and each must be the one docs/observability.md documents.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { API_SPANS, SPANS } from '../../src/telemetry/span-names.js';

const CONTRACT_API_SPANS = {
  DeployAgent: 'svc.api.deploy_agent',
  UndeployAgent: 'svc.api.undeploy_agent',
  ListAgents: 'svc.api.list_agents',
  GetAgent: 'svc.api.get_agent',
  RestartAgent: 'svc.api.restart_agent',
  UpdateAgent: 'svc.api.update_agent',
  GetAgentLogs: 'svc.api.get_agent_logs',
  FollowAgentLogs: 'svc.api.follow_agent_logs',
  SendMessage: 'svc.api.send_message',
  CallAgent: 'svc.api.call_agent',
  SubscribeMessages: 'svc.api.subscribe_messages',
  Health: 'svc.api.health',
  Metrics: 'svc.api.metrics',
  ListMembers: 'svc.api.list_members',
  RecentMessages: 'svc.api.recent_messages',
};

const CONTRACT_SPANS = {
  wasmValidate: 'svc.wasm.validate',
  runtimeCreate: 'svc.runtime.create',
  registryRegister: 'svc.registry.register',
  eventsEmit: 'svc.events.emit',
  messagesSend: 'svc.messages.send',
  agentExecute: 'svc.agent.execute',
};

const ALL = [...Object.values(API_SPANS), ...Object.values(SPANS)];

test('the API spans are exactly the contract\'s names', () => {
  assert.deepEqual({ ...API_SPANS }, CONTRACT_API_SPANS);
});

test('the internal spans are exactly the contract\'s names', () => {
  assert.deepEqual({ ...SPANS }, CONTRACT_SPANS);
});

test('every span name has the svc. prefix, the API ones svc.api., and no name is used twice', () => {
  for (const name of ALL) assert.match(name, /^svc\.[a-z]+\.[a-z_]+$/, name);
  for (const name of Object.values(API_SPANS)) assert.ok(name.startsWith('svc.api.'), name);
  for (const name of Object.values(SPANS)) assert.ok(!name.startsWith('svc.api.'), `${name} is not an API call`);
  assert.equal(new Set(ALL).size, ALL.length);
});

test('docs/observability.md documents exactly these spans in its table', () => {
  const docs = readFileSync(new URL('../../docs/observability.md', import.meta.url), 'utf8');
  // The table's rows begin with the span name in backquotes: | `svc.api.health` | server | ...
  const documented = [...docs.matchAll(/^\| `(svc\.[a-z_.]+)` \| (?:server|internal|producer|consumer) \|/gm)].map((m) => m[1]);
  assert.deepEqual([...documented].sort(), [...ALL].sort());
});
