/**
 * Issue 5: a deployment, through either door, reaches an OTLP collector as
 * `svc.api.deploy_agent` with the children `svc.wasm.validate`,
 * `svc.runtime.create`, `svc.registry.register` and `svc.events.emit`, in
 * that order, with exactly those names and parent links.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SPAN_ATTRIBUTES } from '../../src/telemetry/span-names.js';
import type { ReceivedSpan } from '../telemetry/otlp-receiver.js';
import { example, named, rest, startObservedServer, type ObservedServer } from './observability-fixtures.js';

/** OTLP span kinds (opentelemetry-proto trace.proto: SPAN_KIND_SERVER = 2). */
const OTLP_SERVER = 2;
// The contract's names spelled out, not span-names.ts's constants: what the collector receives is checked against the issue, not against ourselves.
const DEPLOY = 'svc.api.deploy_agent';
const DEPLOY_STEPS = ['svc.wasm.validate', 'svc.runtime.create', 'svc.registry.register', 'svc.events.emit'];

let observed: ObservedServer;
before(async () => {
  observed = await startObservedServer();
});
after(() => observed.stop());

/** Waits for the deploy's trace: the API span and its four steps. */
async function deployTrace(traceId: string): Promise<{ root: ReceivedSpan; children: ReceivedSpan[] }> {
  const spans = await observed.spansUntil(
    (all) => named(all, DEPLOY, traceId).length === 1 && DEPLOY_STEPS.every((step) => named(all, step, traceId).length > 0),
    `the deploy trace ${traceId}`,
  );
  const [root] = named(spans, DEPLOY, traceId);
  assert.ok(root);
  // Arrival order is the order spans ended (the batch processor queues a span when it ends); the steps run one after another.
  return { root, children: spans.filter((s) => s.traceId === traceId && s.parentSpanId === root.spanId) };
}

function assertDeployTree(root: ReceivedSpan, children: readonly ReceivedSpan[], agentId: string, name: string): void {
  assert.equal(root.kind, OTLP_SERVER);
  assert.equal(root.parentSpanId, '', 'the deploy starts the trace');
  assert.equal(root.scope, 'svc');
  assert.equal(root.resource['service.name'], 'svc');
  assert.equal(root.attributes[SPAN_ATTRIBUTES.agentId], agentId);
  assert.equal(root.attributes[SPAN_ATTRIBUTES.agentName], name);
  assert.equal(root.statusCode, 0, 'the deploy succeeded');
  assert.deepEqual(children.map((s) => s.name), DEPLOY_STEPS, 'exactly these children, in this order');
  for (const child of children) assert.equal(child.statusCode, 0, `${child.name} succeeded`);
  const [validate, create, register, emit] = children as [ReceivedSpan, ReceivedSpan, ReceivedSpan, ReceivedSpan];
  assert.match(String(validate.attributes[SPAN_ATTRIBUTES.moduleSha256]), /^[0-9a-f]{64}$/);
  assert.equal(validate.attributes[SPAN_ATTRIBUTES.moduleSize], example('echo').length);
  assert.equal(create.attributes[SPAN_ATTRIBUTES.agentId], agentId);
  assert.equal(register.attributes[SPAN_ATTRIBUTES.agentId], agentId);
  assert.equal(emit.attributes[SPAN_ATTRIBUTES.agentId], agentId);
}

describe('the deploy trace', { timeout: 60_000 }, () => {
  it('over REST: svc.api.deploy_agent, then validate, create, register, emit as its children', async () => {
    const answer = await rest(observed.api, 'POST', '/api/v1/agents', { name: 'traced-rest', wasm_module: example('echo').toString('base64') });
    assert.equal(answer.status, 201, answer.text);
    const traceId = answer.headers.get('x-trace-id') ?? '';
    const { root, children } = await deployTrace(traceId);
    assertDeployTree(root, children, answer.body.agent_id, 'traced-rest');
    assert.equal(root.attributes[SPAN_ATTRIBUTES.httpRoute], '/api/v1/agents');
    assert.equal(root.attributes[SPAN_ATTRIBUTES.httpStatusCode], 201);
  });

  it('over gRPC: the same tree, under the trace id the client chose', async () => {
    const traceId = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const { agent_id } = await observed.client.deploy({ name: 'traced-grpc', wasm_module: example('echo') }, { traceId });
    const { root, children } = await deployTrace(traceId);
    assertDeployTree(root, children, agent_id, 'traced-grpc');
    assert.equal(root.attributes[SPAN_ATTRIBUTES.rpcMethod], 'DeployAgent');
    assert.equal(root.attributes[SPAN_ATTRIBUTES.grpcStatusCode], 0);
  });

  it('a refused deploy is one failed span with its error code, and no runtime step', async () => {
    const answer = await rest(observed.api, 'POST', '/api/v1/agents', { name: 'traced-bad', wasm_module: 'AAECAw==' });
    assert.equal(answer.status, 422, answer.text);
    const traceId = answer.body.trace_id as string;
    assert.equal(answer.headers.get('x-trace-id'), traceId);
    const spans = await observed.spansUntil((all) => named(all, DEPLOY, traceId).length === 1, 'the refused deploy');
    const [root] = named(spans, DEPLOY, traceId);
    assert.equal(root?.statusCode, 2);
    assert.equal(root?.attributes[SPAN_ATTRIBUTES.errorCode], 'INVALID_MODULE');
    assert.ok(root?.events.includes('exception'));
    assert.deepEqual(named(spans, 'svc.runtime.create', traceId), [], 'nothing was created');
  });
});
