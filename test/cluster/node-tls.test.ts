/**
 * Node-to-node calls over TLS (whole servers in this process, certificates
 * made by openssl): with the gRPC listener on TLS and client certificates
 * required, messages and ListAgents cross nodes; a node whose certificate
 * comes from another CA is refused, and the calling node says so in its log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallContext } from '../../src/agents/agent-service-types.js';
import { isSvcError } from '../../src/errors/svc-error.js';
import { example } from '../agents/agent-fixtures.js';
import { createPki, type Pki } from '../security/test-pki.js';
import { startInProcessNode, type InProcessNode } from './in-process-nodes.js';

const ctx: CallContext = { principal: 'tester', trace_id: 'trace-node-tls' };
const NODE_EXTENSIONS = 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n';
const WAIT_MS = 30_000;

/** Polls `check` until it holds; the last failure's message otherwise. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function tlsEnv(pki: Pki, name: string): Record<string, string> {
  return {
    SVC_SECURITY_TLS_CERT_FILE: pki.path(`${name}.pem`),
    SVC_SECURITY_TLS_KEY_FILE: pki.path(`${name}.key`),
    SVC_SECURITY_TLS_CA_FILE: pki.path('ca.pem'),
    SVC_SECURITY_REQUIRE_CLIENT_CERT: 'true',
  };
}

const deploy = async (node: InProcessNode, name: string) => (await node.server.service.deploy({ name, wasm_module: example('echo'), capabilities: [], resources: { memory_limit: 0, cpu_shares: 0 } }, ctx)).agent_id;

describe('node-to-node calls over mutual TLS', () => {
  let pki: Pki;
  const nodes: InProcessNode[] = [];

  before(async () => {
    pki = await createPki();
    pki.issue('node-a', '/CN=node-a', NODE_EXTENSIONS);
    pki.issue('node-b', '/CN=node-b', NODE_EXTENSIONS);
    pki.issue('node-rogue', '/CN=node-rogue', NODE_EXTENSIONS, 'rogue-ca');
  });

  after(async () => {
    for (const node of nodes.reverse()) await node.stop();
    pki?.remove();
  });

  it('carries a message to an agent on the other node, and ListAgents reads its counters there', async () => {
    const a = await startInProcessNode({ env: tlsEnv(pki, 'node-a') });
    nodes.push(a);
    const b = await startInProcessNode({ env: tlsEnv(pki, 'node-b'), seed: a.gossip });
    nodes.push(b);
    const echo = await deploy(b, 'echo-tls');
    await eventually('echo known on a', async () => (await a.server.service.get(echo, ctx)).node_id === b.server.nodeId);
    await a.server.service.send({ receiver: echo, message_type: 'request', content: 'over tls' }, ctx);
    await eventually('the echo handled it on b', async () => (await b.server.service.get(echo, ctx)).messages_received === 1);
    const listed = await a.server.service.list({}, ctx);
    assert.equal(listed.unreachable_nodes, undefined);
    assert.equal(listed.agents.find((agent) => agent.agent_id === echo)?.messages_received, 1);
  });

  it('refuses a node whose certificate another CA signed: the message is refused and the calling node logs why', async () => {
    const [a] = nodes as [InProcessNode];
    const rogue = await startInProcessNode({ env: tlsEnv(pki, 'node-rogue'), seed: a.gossip });
    nodes.push(rogue);
    const agent = await deploy(rogue, 'echo-rogue');
    await eventually('the rogue node\'s agent known on a', async () => a.server.cluster?.agents()?.isRemote(agent) === true);
    await assert.rejects(a.server.service.send({ receiver: agent, message_type: 'request', content: 'refused' }, ctx), (error: unknown) => isSvcError(error) && error.code === 'NOT_FOUND');
    const line = await a.warnings.waitFor((record) => record.msg === 'node-to-node stream failed: the messages on it are refused' && record.node_id === rogue.server.nodeId, 'the refusal logged on a');
    assert.match(String(line.reason), /certificate/i);
    const listed = await a.server.service.list({}, ctx);
    assert.deepEqual(listed.unreachable_nodes, [rogue.server.nodeId]);
    assert.equal((await rogue.server.service.get(agent, ctx)).messages_received, 0);
  });
});
