/**
 * Issue 5: `/metrics` scraped from the metrics listener after a scripted
 * workload (deploys over both doors, a send and its reply, lists, a 404, a
 * WebSocket subscriber, an agent crash, an undeploy) has every `svc_*`
 * metric of the issue with the values the workload implies, passes
 * `promtool check metrics`, carries only the documented labels, forgets an
 * undeployed agent's series, and agrees with the JSON of both doors. A
 * second server, with one agent busy, shows the messages queued behind it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { METRIC_LABELS, METRICS } from '../../src/telemetry/metric-catalog.js';
import { burner, compile } from '../agents/agent-wat.js';
import { parsePrometheusText, promtoolCheck, type TextSample } from '../telemetry/prometheus-text.js';
import type { BusEvent, LifecycleEvent, MessageEvent } from '../../src/bus/events.js';
import { whenArrived } from '../telemetry/when-arrived.js';
import { example, rest, startObservedServer, type ObservedServer } from './observability-fixtures.js';

/** Iterations of the busy agent's loop: about a second and a half of CPU, far longer than a scrape, within the default fuel. */
const BUSY_ITERATIONS = 500_000_000;

let observed: ObservedServer;
let subscriber: WebSocket;
const frames: Array<{ message_type: string; sender: string; receiver: string; content: string }> = [];
const frameArrivals = new Set<() => void>();
/** The first WebSocket frame `match` accepts, as frames arrive. */
const frame = (match: (m: (typeof frames)[number]) => boolean, what: string) => whenArrived(frameArrivals, () => frames.find(match), what, 10_000);
const agents = { echo: '', crasher: '', temporary: '' };
let beforeUndeploy: TextSample[] = [];
let text = '';
let samples: TextSample[] = [];

async function scrape(url = observed.metricsUrl): Promise<string> {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  return res.text();
}

function value(name: string, labels: Record<string, string> = {}, from: readonly TextSample[] = samples): number | undefined {
  return from.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

/** The workload, over both doors; every REST request is listed, as the HTTP counts below depend on them. */
before(async () => {
  observed = await startObservedServer(['--runtime.restart_backoff_initial=10ms', '--runtime.restart_backoff_jitter=0']);
  const { api, client } = observed;
  subscriber = new WebSocket(`${api.replace('http', 'ws')}/api/v1/messages`); // REST 1: GET 101
  subscriber.on('message', (data) => {
    frames.push(JSON.parse(String(data)) as (typeof frames)[number]);
    for (const arrival of [...frameArrivals]) arrival();
  });
  await new Promise((resolve, reject) => subscriber.once('open', resolve).once('error', reject));

  const deploy = async (name: string, wasm: Buffer) => (await rest(api, 'POST', '/api/v1/agents', { name, wasm_module: wasm.toString('base64') })).body.agent_id as string;
  agents.echo = await deploy('scrape-echo', example('echo')); // REST 2: POST 201
  agents.temporary = await deploy('scrape-temporary', example('echo')); // REST 3: POST 201
  agents.crasher = (await client.deploy({ name: 'scrape-crasher', wasm_module: example('crasher') })).agent_id;

  assert.equal((await rest(api, 'POST', `/api/v1/agents/${agents.echo}/messages`, { message_type: 'request', content: 'hello' })).status, 202); // REST 4: POST 202
  await frame((m) => m.sender === agents.echo && m.message_type === 'inform', 'the echo reply');
  assert.equal((await rest(api, 'GET', '/api/v1/agents')).status, 200); // REST 5: GET 200
  await client.list();
  assert.equal((await rest(api, 'GET', '/api/v1/agents/01J00000000000000000000000')).status, 404); // REST 6: GET 404

  const lifecycle = observed.busEvents();
  await client.send({ receiver: agents.crasher, message_type: 'request', content: 'crash' });
  await frame((m) => m.message_type === 'failure' && m.receiver === 'client:anonymous', 'the failure for the crashed message');
  const transition = (to: string) => (e: BusEvent): e is LifecycleEvent => e.kind === 'lifecycle' && e.agent_id === agents.crasher && e.to === to;
  await lifecycle.waitFor(transition('restarting'), 'the crasher restarting');
  await lifecycle.waitFor(transition('running'), 'the crasher running again');
  lifecycle.stop();
  assert.ok((await client.get(agents.crasher)).restart_count >= 1, 'the crasher restarted');

  beforeUndeploy = parsePrometheusText(await scrape()).samples;
  assert.equal((await rest(api, 'DELETE', `/api/v1/agents/${agents.temporary}`)).status, 200); // REST 7: DELETE 200
  text = await scrape();
  samples = parsePrometheusText(text).samples;
});
after(async () => {
  subscriber.close();
  await observed.stop();
});

describe('/metrics after a workload', { timeout: 60_000 }, () => {
  it('passes promtool check metrics', () => {
    const check = promtoolCheck(text);
    assert.ok(check !== undefined, 'promtool is installed (Debian prometheus; .ci/run installs it)');
    assert.ok(check.ok, check.output);
    assert.deepEqual(parsePrometheusText(text).errors, []);
  });

  it('has every svc_* metric of the catalog, with only the documented labels and never sensitive_data', () => {
    const { families } = parsePrometheusText(text);
    for (const spec of Object.values(METRICS)) {
      assert.equal(families.get(spec.name)?.type, spec.type, `# TYPE of ${spec.name}`);
      assert.ok(samples.some((s) => s.name === spec.name || s.name.startsWith(`${spec.name}_`)), `a sample of ${spec.name}`);
    }
    const allowed = new Set<string>([...METRIC_LABELS, 'le']);
    for (const sample of samples.filter((s) => s.name.startsWith('svc_'))) {
      for (const label of Object.keys(sample.labels)) assert.ok(allowed.has(label), `${sample.name} has label ${label}`);
    }
    assert.ok(!text.includes('sensitive_data'));
  });

  it('counts the runtime: deploys, active agents, executions by status, memory per agent', () => {
    assert.equal(value('svc_agents_total'), 3);
    assert.equal(value('svc_agents_active'), 2, 'echo and the restarted crasher; the undeployed one is gone');
    assert.equal(value('svc_agent_executions_total', { status: 'success' }), 1, 'echo handled hello');
    assert.equal(value('svc_agent_executions_total', { status: 'error' }), 1, 'the crash');
    assert.equal(value('svc_agent_execution_duration_seconds_count'), 2);
    for (const id of [agents.echo, agents.crasher]) assert.ok((value('svc_wasm_memory_usage_bytes', { agent_id: id }) ?? 0) > 0, `memory of ${id}`);
    assert.ok((value('svc_runtime_memory_usage_bytes') ?? 0) > 0);
    const cpu = value('svc_runtime_cpu_usage_ratio');
    // The share since the probes were made, the first time it is read: the deploys and executions above used CPU.
    assert.ok(cpu !== undefined && cpu > 0 && cpu <= 1, `cpu ratio ${cpu}`);
  });

  it('forgets an undeployed agent\'s series', () => {
    assert.ok((value('svc_wasm_memory_usage_bytes', { agent_id: agents.temporary }, beforeUndeploy) ?? 0) > 0, 'present while deployed');
    assert.equal(value('svc_wasm_memory_usage_bytes', { agent_id: agents.temporary }), undefined);
    assert.ok(!text.includes(agents.temporary), 'no series names the undeployed agent');
  });

  it('counts messages: sent and received by type, processing time, queue, errors', () => {
    assert.equal(value('svc_messages_sent_total', { message_type: 'request' }), 2, 'the two client sends');
    assert.equal(value('svc_messages_sent_total', { message_type: 'inform' }), 1, 'echo\'s reply');
    assert.equal(value('svc_messages_received_total', { message_type: 'request' }), 2);
    assert.equal(value('svc_message_processing_duration_seconds_count'), 2, 'echo\'s hello and the crasher\'s crash; replies go to the client, not to an agent');
    assert.equal(value('svc_message_queue_size'), 0);
    assert.equal(value('svc_message_errors_total', { message_type: 'request' }), 1, 'the message the crasher could not handle');
  });

  it('counts the REST requests by method and status, connections and the open WebSocket', () => {
    const expected: Array<[string, string, number]> = [
      ['GET', '101', 1],
      ['POST', '201', 2],
      ['POST', '202', 1],
      ['GET', '200', 1],
      ['GET', '404', 1],
      ['DELETE', '200', 1],
    ];
    for (const [method, status, count] of expected) assert.equal(value('svc_http_requests_total', { method, status }), count, `${method} ${status}`);
    const requests = samples.filter((s) => s.name === 'svc_http_requests_total').reduce((sum, s) => sum + s.value, 0);
    assert.equal(requests, 7, 'the seven REST requests of the workload, the DELETE included');
    assert.equal(value('svc_http_request_duration_seconds_count', { method: 'POST' }), 3);
    assert.equal(value('svc_http_request_duration_seconds_count', { method: 'GET' }), 3);
    assert.equal(value('svc_websocket_connections'), 1);
    assert.ok((value('svc_http_active_connections') ?? 0) >= 1, 'the WebSocket connection at least');
    assert.ok((value('svc_network_bytes_total') ?? 0) > 0);
  });

  it('counts the gRPC calls by method and status, with durations; no stream open', () => {
    assert.equal(value('svc_grpc_requests_total', { method: 'DeployAgent', status: 'OK' }), 1);
    assert.equal(value('svc_grpc_requests_total', { method: 'ListAgents', status: 'OK' }), 1);
    assert.equal(value('svc_grpc_requests_total', { method: 'SendMessage', status: 'OK' }), 1);
    assert.equal(value('svc_grpc_request_duration_seconds_count', { method: 'DeployAgent' }), 1);
    assert.equal(value('svc_grpc_active_streams'), 0);
  });

  it('reads the system: disk, descriptors', () => {
    assert.ok((value('svc_disk_usage_bytes') ?? 0) > 0, 'the SQLite file and module blobs');
    assert.ok((value('svc_file_descriptors') ?? 0) > 0);
  });

  it('the Metrics RPC and GET /api/v1/metrics answer the same figures as the text', async () => {
    // Each call counts itself once answered, so series of calls differ by the calls made; these figures do not.
    const stable = (list: ReadonlyArray<{ name: string; labels: Record<string, string>; value: number }>) =>
      list
        .filter((s) => s.name.startsWith('svc_') && (s.name.startsWith('svc_agents_') || s.name.startsWith('svc_messages_') || s.name === 'svc_wasm_memory_usage_bytes'))
        .map((s) => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())} ${s.value}`)
        .sort();
    const names = (list: ReadonlyArray<{ name: string }>) => [...new Set(list.map((s) => s.name).filter((n) => n.startsWith('svc_')))].sort();
    const fromText = parsePrometheusText(await scrape()).samples;
    const fromRpc = (await observed.client.metrics()).samples;
    const fromRest = (await rest(observed.api, 'GET', '/api/v1/metrics')).body.samples as typeof fromRpc;
    assert.deepEqual(names(fromRpc), names(fromText));
    assert.deepEqual(names(fromRest), names(fromText));
    assert.deepEqual(stable(fromRpc), stable(fromText));
    assert.deepEqual(stable(fromRest), stable(fromText));
  });
});

describe('/metrics while an agent is busy', { timeout: 60_000 }, () => {
  it('svc_message_queue_size counts the messages waiting behind the execution', async () => {
    // No CPU quota, so the first message runs at once instead of waiting in the mailbox; stop cuts the execution
    // rather than wait for it; no tracing, which the gauge does not need and whose shutdown would take most of the test's time.
    const busy = await startObservedServer(['--runtime.cpu_quota_per_agent=0', '--runtime.execution_slice=0', '--runtime.agent_shutdown_timeout=50ms', '--observability.enable_tracing=false']);
    try {
      const { agent_id } = await busy.client.deploy({ name: 'scrape-busy', wasm_module: await compile(burner(BUSY_ITERATIONS)) });
      const deliveries = busy.busEvents();
      for (const content of ['first', 'second', 'third']) await busy.client.send({ receiver: agent_id, message_type: 'request', content });
      const handed = (e: BusEvent): e is MessageEvent => e.kind === 'message' && e.direction === 'delivered' && e.message.receiver === agent_id;
      await deliveries.waitFor(handed, 'the first message handed to the busy agent');
      deliveries.stop();
      assert.equal((await busy.client.get(agent_id)).state, 'executing');
      const scraped = parsePrometheusText(await scrape(busy.metricsUrl)).samples;
      assert.equal(value('svc_message_queue_size', {}, scraped), 2, 'one executing, two waiting');
    } finally {
      await busy.stop();
    }
  });
});
