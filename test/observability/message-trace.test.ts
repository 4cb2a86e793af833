/**
 * Issue 5: a message a client sends to agent A, which sends to agent B
 * (examples/agents/ping.ts and pong.ts), forms one trace: the API span, each
 * `svc.messages.send` and each `svc.agent.execute`, linked send → execute →
 * send across both agents. The log lines the game causes carry that trace id.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SPAN_ATTRIBUTES } from '../../src/telemetry/span-names.js';
import type { ReceivedSpan } from '../telemetry/otlp-receiver.js';
import { example, named, rest, startObservedServer, type ObservedServer } from './observability-fixtures.js';

const ROUNDS = 2;
// The contract's names spelled out, not span-names.ts's constants: what the collector receives is checked against the issue, not against ourselves.
const SEND_MESSAGE = 'svc.api.send_message';
const MESSAGES_SEND = 'svc.messages.send';
const AGENT_EXECUTE = 'svc.agent.execute';

let observed: ObservedServer;
let ping: string;
let pong: string;
/** Trace ids of the games this file started: every execution of ping or pong belongs to one of them. */
const games = new Set<string>();
before(async () => {
  observed = await startObservedServer();
  const deploy = async (name: 'ping' | 'pong') => {
    const answer = await rest(observed.api, 'POST', '/api/v1/agents', { name, wasm_module: example(name).toString('base64') });
    assert.equal(answer.status, 201, answer.text);
    return answer.body.agent_id as string;
  };
  pong = await deploy('pong');
  ping = await deploy('ping');
});
after(() => observed.stop());

const executionsOf = (spans: readonly ReceivedSpan[], agentId: string) =>
  named(spans, AGENT_EXECUTE).filter((s) => s.attributes[SPAN_ATTRIBUTES.agentId] === agentId);

/** Waits for a whole game: ping handles `start` and each pong, pong handles each ping. */
function game(traceId: string): Promise<ReceivedSpan[]> {
  return observed.spansUntil(
    (all) => {
      const inTrace = all.filter((s) => s.traceId === traceId);
      return named(inTrace, SEND_MESSAGE).length === 1 && executionsOf(inTrace, ping).length >= ROUNDS + 1 && executionsOf(inTrace, pong).length >= ROUNDS;
    },
    `the ping/pong game of trace ${traceId}`,
  );
}

/** One trace, linked hop by hop: API → send → execute(ping) → send → execute(pong) → send → execute(ping) … */
function assertOneLinkedTrace(spans: readonly ReceivedSpan[], traceId: string): void {
  const trace = spans.filter((s) => s.traceId === traceId);
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  const [api] = named(trace, SEND_MESSAGE);
  assert.ok(api);
  assert.equal(api.attributes[SPAN_ATTRIBUTES.messageReceiver], ping);

  const sends = named(trace, MESSAGES_SEND);
  const fromClient = sends.filter((s) => s.parentSpanId === api.spanId);
  assert.equal(fromClient.length, 1, 'the client\'s message is sent inside the API span');
  assert.equal(fromClient[0]?.attributes[SPAN_ATTRIBUTES.messageReceiver], ping);
  for (const send of sends) {
    if (send === fromClient[0]) continue;
    assert.equal(byId.get(send.parentSpanId)?.name, AGENT_EXECUTE, `an agent's send is a child of its execution (${JSON.stringify(send.attributes)})`);
  }

  for (const agentId of [ping, pong]) {
    const executions = executionsOf(trace, agentId);
    for (const execution of executions) {
      const parent = byId.get(execution.parentSpanId);
      assert.equal(parent?.name, MESSAGES_SEND, 'each execution continues the send of its message');
      assert.equal(parent?.attributes[SPAN_ATTRIBUTES.messageReceiver], agentId);
      assert.equal(execution.attributes[SPAN_ATTRIBUTES.executionStatus], 'success');
    }
  }
  // A hop that lost the context would start a trace of its own.
  const stray = [...executionsOf(spans, ping), ...executionsOf(spans, pong)].filter((s) => !games.has(s.traceId));
  assert.deepEqual(stray.map((s) => s.traceId), [], 'every execution belongs to a game the test started');
}

describe('the message trace', { timeout: 60_000 }, () => {
  it('client → ping → pong → ping over REST is one trace, linked hop by hop, with traceparent in each message', async () => {
    const traceId = '5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e';
    games.add(traceId);
    const sent = await rest(observed.api, 'POST', `/api/v1/agents/${ping}/messages`, { message_type: 'request', content: `start:${pong}:${ROUNDS}` }, { 'X-Trace-Id': traceId });
    assert.equal(sent.status, 202, sent.text);
    assert.equal(sent.headers.get('x-trace-id'), traceId);
    assertOneLinkedTrace(await game(traceId), traceId);

    const recent = await rest(observed.api, 'GET', `/api/v1/agents/${pong}/messages`);
    const pings = (recent.body.messages as Array<{ content: string; metadata: Record<string, string> }>).filter((m) => m.content === 'ping');
    assert.ok(pings.length >= ROUNDS);
    for (const message of pings) assert.match(message.metadata.traceparent ?? '', new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  });

  it('the same game started over gRPC is one trace too, and no other', async () => {
    const traceId = 'feedface0000000000000000feedface';
    games.add(traceId);
    await observed.client.send({ receiver: ping, message_type: 'request', content: `start:${pong}:${ROUNDS}` }, { traceId });
    assertOneLinkedTrace(await game(traceId), traceId);
  });

  it('an agent reads its trace context in its message\'s metadata: the send span that delivered it', async () => {
    const traceId = 'a11ce0000000000000000000000a11ce';
    const deployed = await rest(observed.api, 'POST', '/api/v1/agents', { name: 'tracer', wasm_module: example('tracer').toString('base64') });
    assert.equal(deployed.status, 201, deployed.text);
    const tracer = deployed.body.agent_id as string;
    const sent = await rest(observed.api, 'POST', `/api/v1/agents/${tracer}/messages`, { message_type: 'request', content: 'x' }, { 'X-Trace-Id': traceId });
    assert.equal(sent.status, 202, sent.text);
    // The execution's span is exported after its reply was routed (both in the turn the execution settled).
    const spans = await observed.spansUntil((all) => named(all, AGENT_EXECUTE, traceId).length === 1, 'the tracer\'s execution');
    const recent = await rest(observed.api, 'GET', `/api/v1/agents/${tracer}/messages`);
    const reply = (recent.body.messages as Array<{ sender: string; content: string }>).find((m) => m.sender === tracer);
    assert.ok(reply, 'the tracer\'s reply');
    const [execution] = named(spans, AGENT_EXECUTE, traceId);
    assert.equal(execution?.attributes[SPAN_ATTRIBUTES.agentId], tracer);
    assert.equal(reply.content, `traceparent=00-${traceId}-${execution.parentSpanId}-01`);
    assert.equal(named(spans, MESSAGES_SEND, traceId).find((s) => s.spanId === execution.parentSpanId)?.attributes[SPAN_ATTRIBUTES.messageReceiver], tracer);
  });

  it('the log lines the game causes are JSON and carry its trace id', async () => {
    const traceId = '0123456789abcdef0123456789abcdef';
    games.add(traceId);
    const mark = observed.log.text().length;
    await rest(observed.api, 'POST', `/api/v1/agents/${ping}/messages`, { message_type: 'request', content: `start:${pong}:${ROUNDS}` }, { 'X-Trace-Id': traceId });
    // ping writes `ping: done, <n> pongs ...` to fd 2 when the game is over: the agent's log line.
    const done = await observed.log.waitFor(
      (r) => r.agent_id === ping && String(r.line ?? '').startsWith('ping: done') && r.trace_id === traceId,
      'ping\'s "done" line in this trace',
    );
    assert.equal(done.msg, 'agent log');
    const records = observed.log.records(); // throws on any line that is not JSON
    assert.equal(records.length, observed.log.text().length);
    const access = records.find((r) => r.msg === 'http request' && r.trace_id === traceId);
    assert.deepEqual({ method: access?.method, route: access?.route, status: access?.status }, { method: 'POST', route: '/api/v1/agents/{message.receiver}/messages', status: 202 });
    const started = records.slice(mark).find((r) => r.agent_id === ping && String(r.line ?? '').startsWith(`ping: ${ROUNDS} rounds with ${pong}`));
    assert.equal(started?.trace_id, traceId, 'the line ping wrote while handling the client\'s message');
    for (const record of records) {
      assert.equal(typeof record.time, 'string');
      assert.equal(typeof record.level, 'number');
      // Debug lines about messages may keep their content (docs/observability.md); access lines never carry it.
      if (record.msg === 'http request' || record.msg === 'grpc call') assert.ok(!JSON.stringify(record).includes(`start:${pong}`), 'no content in an access line');
    }
  });
});
