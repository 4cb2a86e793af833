import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createRealClock, createSimulatedClock } from '../../supervisors/index.js';
import {
  grpcMethodLabel,
  grpcStatusLabel,
  httpMethodLabel,
  messageTypeLabel,
  METRIC_LABELS,
  METRICS,
  type MetricSpec,
} from '../../src/telemetry/metric-catalog.js';
import { createMetrics, type Metrics } from '../../src/telemetry/metrics.js';
import { CPU_WINDOW_MS, createProcessProbes, type ProcessProbes } from '../../src/telemetry/process-probes.js';
import { parsePrometheusText, promtoolCheck } from './prometheus-text.js';

const SPECS = Object.values(METRICS) as MetricSpec[];

const fixedProbes: ProcessProbes = {
  memoryBytes: () => 123_456_789,
  cpuRatio: () => 0.25,
  fileDescriptors: async () => 42,
  diskUsageBytes: async () => 8_192,
};

/** One of everything, as a scripted workload would leave it. */
function exercise(metrics: Metrics): void {
  metrics.agentsDeployed.inc(3);
  metrics.agentsActive.set(2);
  metrics.recordExecution('success', 0.002);
  metrics.recordExecution('error', 0.5);
  metrics.wasmMemory.set({ agent_id: 'a1' }, 65_536);
  metrics.wasmMemory.set({ agent_id: 'a2' }, 131_072);
  metrics.messagesSent.inc({ message_type: messageTypeLabel('request') });
  metrics.messagesReceived.inc({ message_type: messageTypeLabel('request') });
  metrics.messageProcessingDuration.observe(0.003);
  metrics.messageQueueSize.set(5);
  metrics.messageErrors.inc({ message_type: messageTypeLabel('inform') });
  metrics.recordHttpRequest('post', 201, 0.01);
  metrics.recordHttpRequest('BREW', 405, 0.001);
  metrics.websocketConnections.inc();
  metrics.recordGrpcCall('/svc.v1.ManagementService/Health', 0, 0.0004);
  metrics.recordGrpcCall('/svc.v1.ManagementService/GetAgent', 5, 0.0007);
  metrics.grpcActiveStreams.inc();
}

test('every svc_* metric of the catalog is registered with its type, help and allowed labels only', async () => {
  const metrics = createMetrics({ probes: fixedProbes });
  const { families, errors } = parsePrometheusText(await metrics.registry.metrics());
  assert.deepEqual(errors, []);
  for (const spec of SPECS) {
    const family = families.get(spec.name);
    assert.ok(family, `${spec.name} is exposed`);
    assert.equal(family.type, spec.type, spec.name);
    assert.equal(family.help, spec.help, spec.name);
    for (const label of spec.labels) assert.ok((METRIC_LABELS as readonly string[]).includes(label), `${spec.name}{${label}}`);
    assert.equal(spec.name.endsWith('_total'), spec.type === 'counter', `${spec.name}: _total exactly on counters`);
    assert.match(spec.name, /^svc_[a-z_]+$/);
  }
  assert.equal(new Set(SPECS.map((s) => s.name)).size, SPECS.length, 'no name twice');
  for (const name of ['svc_agents_total', 'svc_agents_active', 'svc_agent_executions_total', 'svc_agent_execution_duration_seconds', 'svc_wasm_memory_usage_bytes',
    'svc_runtime_memory_usage_bytes', 'svc_runtime_cpu_usage_ratio', 'svc_messages_sent_total', 'svc_messages_received_total', 'svc_message_processing_duration_seconds',
    'svc_message_queue_size', 'svc_message_errors_total', 'svc_http_requests_total', 'svc_http_request_duration_seconds', 'svc_http_active_connections',
    'svc_websocket_connections', 'svc_disk_usage_bytes', 'svc_network_bytes_total', 'svc_file_descriptors', 'svc_grpc_requests_total', 'svc_grpc_request_duration_seconds']) {
    assert.ok(families.has(name), `issue 5 names ${name}`);
  }
});

test('after a workload the samples carry the expected values and no label outside the allowed set', async () => {
  const metrics = createMetrics({ probes: fixedProbes });
  exercise(metrics);
  const text = await metrics.registry.metrics();
  assert.doesNotMatch(text, /sensitive_data/);
  const { samples } = parsePrometheusText(text);
  // Node's own metrics (process_*, nodejs_*) keep prom-client's labels; the rule is for svc_*.
  for (const sample of samples.filter((s) => s.name.startsWith('svc_'))) {
    for (const label of Object.keys(sample.labels)) {
      assert.ok(label === 'le' || (METRIC_LABELS as readonly string[]).includes(label), `${sample.name}{${label}}`);
    }
  }
  const value = (name: string, labels: Record<string, string> = {}) =>
    samples.find((s) => s.name === name && JSON.stringify(s.labels) === JSON.stringify(labels))?.value;
  assert.equal(value('svc_agents_total'), 3);
  assert.equal(value('svc_agent_executions_total', { status: 'error' }), 1);
  assert.equal(value('svc_agent_execution_duration_seconds_count'), 2);
  assert.equal(value('svc_wasm_memory_usage_bytes', { agent_id: 'a2' }), 131_072);
  assert.equal(value('svc_runtime_memory_usage_bytes'), 123_456_789);
  assert.equal(value('svc_runtime_cpu_usage_ratio'), 0.25);
  assert.equal(value('svc_file_descriptors'), 42);
  assert.equal(value('svc_disk_usage_bytes'), 8_192);
  assert.equal(value('svc_http_requests_total', { method: 'POST', status: '201' }), 1);
  assert.equal(value('svc_http_requests_total', { method: 'OTHER', status: '405' }), 1);
  assert.equal(value('svc_grpc_requests_total', { method: 'GetAgent', status: 'NOT_FOUND' }), 1);
  assert.equal(value('svc_grpc_request_duration_seconds_count', { method: 'Health' }), 1);
  assert.equal(value('svc_messages_sent_total', { message_type: 'request' }), 1);
});

test('forgetAgent removes the agent\'s series and keeps the others', async () => {
  const metrics = createMetrics({ probes: fixedProbes });
  exercise(metrics);
  metrics.forgetAgent('a1');
  metrics.forgetAgent('never-deployed');
  const perAgent = parsePrometheusText(await metrics.registry.metrics()).samples.filter((s) => s.name === 'svc_wasm_memory_usage_bytes');
  assert.deepEqual(perAgent.map((s) => s.labels), [{ agent_id: 'a2' }]);
});

test('toSamples gives exactly the figures of the Prometheus text', async () => {
  // Without Node's metrics, whose event-loop and CPU figures move between two collections.
  const metrics = createMetrics({ probes: fixedProbes, nodeMetrics: false });
  exercise(metrics);
  const text = parsePrometheusText(await metrics.registry.metrics()).samples;
  const { samples } = await metrics.toSamples();
  const key = (s: { name: string; labels: Record<string, string>; value: number }) => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())}=${s.value}`;
  assert.deepEqual(samples.map(key).sort(), text.map(key).sort());
  assert.ok(samples.some((s) => s.name === 'svc_http_request_duration_seconds_bucket' && s.labels.le === '+Inf'));
});

test('the text is valid exposition format; promtool check metrics agrees when installed', async (t) => {
  const metrics = createMetrics({ probes: fixedProbes });
  exercise(metrics);
  const text = await metrics.registry.metrics();
  const parsed = parsePrometheusText(text);
  assert.deepEqual(parsed.errors, []);
  assert.ok(parsed.families.has('process_cpu_seconds_total'), 'Node\'s process metrics are on the registry');
  for (const family of parsed.families.values()) {
    assert.equal(family.name.endsWith('_total'), family.type === 'counter', `${family.name} (${family.type}): promtool's lint wants _total exactly on counters`);
  }
  const checked = promtoolCheck(text);
  if (checked === undefined) {
    t.skip('promtool is not on PATH: the Prometheus text was checked by the built-in parser only (.ci/run installs the Debian prometheus package)');
    return;
  }
  assert.ok(checked.ok, checked.output);
});

test('readAtCollect: a reader sets its gauge at each collection; undefined or a throw keeps the last value', async () => {
  const metrics = createMetrics({ probes: fixedProbes });
  const readings: (number | undefined | Error)[] = [7, undefined, new Error('mailbox gone'), 9];
  metrics.readAtCollect('messageQueueSize', () => {
    const next = readings.shift();
    if (next instanceof Error) throw next;
    return next;
  });
  const queue = async () => (await metrics.toSamples()).samples.find((s) => s.name === 'svc_message_queue_size')?.value;
  assert.deepEqual([await queue(), await queue(), await queue(), await queue()], [7, 7, 7, 9]);
});

test('trackConnection counts open HTTP connections and their bytes', async () => {
  const metrics = createMetrics({ probes: fixedProbes });
  let serverSide: Socket | undefined;
  const server = createServer((socket) => {
    serverSide = socket;
    metrics.trackConnection(socket);
    socket.on('data', (chunk) => socket.write(chunk));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const client: Socket = createConnection(port, '127.0.0.1');
  await once(client, 'connect');
  client.write('x'.repeat(1_000));
  await once(client, 'data');
  const sample = async (name: string) => (await metrics.toSamples()).samples.find((s) => s.name === name)?.value;
  assert.equal(await sample('svc_http_active_connections'), 1);
  assert.ok(((await sample('svc_network_bytes_total')) ?? 0) >= 1_000, 'bytes of an open connection are counted at collection');
  // The server's side closes a moment after the client's; trackConnection's own listener runs first.
  const closed = once(serverSide!, 'close');
  client.end();
  await closed;
  assert.equal(await sample('svc_http_active_connections'), 0);
  assert.ok(((await sample('svc_network_bytes_total')) ?? 0) >= 2_000, 'read and written');
  server.close();
});

test('process probes read real figures', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-probes-'));
  try {
    writeFileSync(join(dir, 'agents.db'), Buffer.alloc(20_000, 1));
    const probes = createProcessProbes({ clock: createRealClock(), dataDir: dir });
    assert.ok(probes.memoryBytes() > 1_000_000);
    const ratio = probes.cpuRatio();
    assert.ok(ratio >= 0 && ratio <= 1, `cpu ratio ${ratio}`);
    assert.ok(((await probes.diskUsageBytes()) ?? 0) >= 16_384);
    if (process.platform === 'linux') assert.ok(((await probes.fileDescriptors()) ?? 0) > 3);
    assert.equal(await createProcessProbes({ clock: createRealClock() }).diskUsageBytes(), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Spins until this process has used `ms` of CPU since the call (or two seconds have passed, whichever is first). */
function burnCpu(ms: number): void {
  const start = process.cpuUsage();
  const deadline = Date.now() + 2_000;
  let sink = 0;
  for (;;) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms || Date.now() > deadline) break;
    for (let i = 0; i < 10_000; i++) sink += Math.sqrt(i + sink);
  }
  assert.ok(Number.isFinite(sink));
}

test('cpuRatio is the CPU used over the window per core, measured again once the window is over', () => {
  const clock = createSimulatedClock();
  const probes = createProcessProbes({ clock, cores: 1 });
  assert.equal(probes.cpuRatio(), 0, 'no time has passed yet');
  burnCpu(20);
  clock.set(100);
  const first = probes.cpuRatio();
  assert.ok(first >= 0.2 && first <= 1, `at least 20 ms of CPU over 100 ms on one core: ${first}`);
  burnCpu(20);
  clock.set(CPU_WINDOW_MS - 1);
  assert.equal(probes.cpuRatio(), first, 'within the window the last figure stands');
  clock.set(CPU_WINDOW_MS);
  const second = probes.cpuRatio();
  assert.ok(second > 0 && second < first, `the same CPU and a little more, over ${CPU_WINDOW_MS} ms: ${second}`);
});

test('label values come from bounded sets', () => {
  assert.equal(httpMethodLabel('get'), 'GET');
  assert.equal(httpMethodLabel('BREW'), 'OTHER');
  assert.equal(grpcMethodLabel('/svc.v1.ManagementService/DeployAgent'), 'DeployAgent');
  assert.equal(grpcMethodLabel('/evil.Service/' + 'x'.repeat(100)), 'OTHER');
  assert.equal(grpcStatusLabel(0), 'OK');
  assert.equal(grpcStatusLabel(8), 'RESOURCE_EXHAUSTED');
  assert.equal(grpcStatusLabel(99), 'UNKNOWN');
  assert.equal(messageTypeLabel('cfp'), 'cfp');
  assert.equal(messageTypeLabel('made-up'), 'other');
});
