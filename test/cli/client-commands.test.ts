/**
 * The client commands in-process against a real server (both doors on
 * loopback): the output forms (-o wide and yaml), `agents list --watch`
 * driven by a simulated clock, `messages history` over REST, and `messages
 * send`'s FIPA fields.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { createSimulatedClock, type SimulatedClock } from '../../supervisors/index.js';
import { runCli } from '../../src/cli/cli.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { SUITE_TIMEOUT } from '../api/grpc/grpc-harness.js';
import { startCliServer, type CliServer } from './cli-server.js';
import { memoryIo, type MemoryIo } from './memory-io.js';

const ECHO = readFileSync((await ensureExamplesBuilt()).get('echo') ?? '');
/** Bounds every wait on the server: a hang fails the test instead of stalling the run. */
const WAIT_MS = 20_000;

let s: CliServer;
before(async () => {
  s = await startCliServer();
});
after(() => s.stop());

async function svc(...args: string[]): Promise<MemoryIo & { code: number }> {
  const io = memoryIo({ cwd: tmpdir() });
  const code = await runCli(args, io);
  return Object.assign(io, { code });
}

/** Resolves once `clock` has a timer armed: the watch armed its next poll after finishing one. */
async function timerArmed(clock: SimulatedClock): Promise<void> {
  const until = Date.now() + WAIT_MS;
  while (clock.pendingTimers() === 0) {
    assert.ok(Date.now() < until, 'the watch never armed its next poll');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const limit = Date.now() + WAIT_MS;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    assert.ok(Date.now() < limit, `timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('output forms', SUITE_TIMEOUT, () => {
  it('agents list -o wide adds the limit, node, module, capabilities and throttled time; -o yaml is the list as YAML', async () => {
    const { agent_id } = await s.client.deploy({ name: 'forms', wasm_module: ECHO, capabilities: ['x', 'y'], resources: { memory_limit: 1 << 20 } });
    try {
      const wide = await svc('agents', 'list', '-o', 'wide', ...s.server);
      assert.equal(wide.code, EXIT.ok, wide.stderr);
      assert.match(wide.stdout, /^AGENT_ID\s+NAME\s+STATE\s+RESTARTS\s+RECEIVED\s+SENT\s+MEMORY\s+MEMORY_LIMIT\s+NODE\s+MODULE\s+CAPABILITIES\s+THROTTLED\s+CREATED$/m);
      assert.match(wide.stdout, new RegExp(`^${agent_id}\\s+forms\\s+\\w+\\s+0\\s+0\\s+0\\s+\\S+\\s+1MiB\\s+\\S+\\s+[0-9a-f]{12}\\s+x,y\\s+0\\.0s\\s+\\S+$`, 'm'));
      const yaml = await svc('agents', 'list', '-o', 'yaml', ...s.server);
      const listed = parseYaml(yaml.stdout) as { agents: Array<{ agent_id: string; capabilities: string[] }> };
      assert.deepEqual(listed.agents.find((a) => a.agent_id === agent_id)?.capabilities, ['x', 'y']);
      const got = parseYaml((await svc('agents', 'get', agent_id, '-o', 'yaml', ...s.server)).stdout) as { name: string };
      assert.equal(got.name, 'forms');
      const health = parseYaml((await svc('health', '-o', 'yaml', ...s.server)).stdout) as { status: string };
      assert.equal(health.status, 'healthy');
    } finally {
      await s.client.undeploy(agent_id);
    }
  });
});

describe('agents list --watch', SUITE_TIMEOUT, () => {
  it('prints the list, then again only when it changed, until Ctrl-C (exit 0)', async () => {
    const clock = createSimulatedClock();
    const io = memoryIo({ cwd: tmpdir(), clock });
    const tables = (): string[] => io.stdout.split(/\n(?=AGENT_ID)/);
    const watching = runCli(['agents', 'list', '--watch', '--interval', '5s', ...s.server], io);
    await io.stdoutMatches((out) => out.startsWith('AGENT_ID'));
    assert.equal(tables().length, 1);
    await timerArmed(clock);
    // Nothing changed: the poll prints nothing.
    await clock.advance(5_000);
    await timerArmed(clock);
    assert.equal(tables().length, 1);

    const { agent_id } = await s.client.deploy({ name: 'watched', wasm_module: ECHO });
    await clock.advance(5_000);
    await io.stdoutMatches((out) => out.includes(agent_id));
    assert.match(tables().at(-1) ?? '', new RegExp(`^${agent_id}\\s+watched\\s+`, 'm'));

    await s.client.undeploy(agent_id);
    // The next change seen is the agent gone (a state change may come first).
    for (let polls = 0; (tables().at(-1) ?? '').includes(agent_id); polls++) {
      assert.ok(polls < 20, 'the undeploy never showed');
      const printed = io.stdout.length;
      await timerArmed(clock);
      await clock.advance(5_000);
      await until('the next poll', async () => clock.pendingTimers() > 0 || io.stdout.length > printed, Boolean);
    }
    io.interrupt();
    assert.equal(await watching, EXIT.ok);
    assert.equal(io.stderr, '');
  });

  it('-o json prints one {"agents": [...]} line per change; on a terminal the table is redrawn in place', async () => {
    const jsonIo = memoryIo({ cwd: tmpdir(), clock: createSimulatedClock() });
    const json = runCli(['agents', 'list', '-w', '-o', 'json', ...s.server], jsonIo);
    await jsonIo.stdoutMatches((out) => out.endsWith('\n'));
    jsonIo.interrupt();
    assert.equal(await json, EXIT.ok);
    assert.deepEqual(Object.keys(JSON.parse(jsonIo.stdout) as object), ['agents']);

    const tty = memoryIo({ cwd: tmpdir(), clock: createSimulatedClock(), interactive: true });
    const redrawn = runCli(['agents', 'list', '-w', ...s.server], tty);
    await tty.stdoutMatches((out) => out.includes('AGENT_ID'));
    tty.interrupt();
    assert.equal(await redrawn, EXIT.ok);
    assert.ok(tty.stdout.startsWith('\x1b[H\x1b[2JAGENT_ID'));
  });

  it('refuses --interval without --watch, and a bad interval (exit 2)', async () => {
    assert.match((await svc('agents', 'list', '--interval', '1s', ...s.server)).stderr, /^svc: --interval applies only with --watch\n/);
    const bad = await svc('agents', 'list', '-w', '--interval', 'often', ...s.server);
    assert.equal(bad.code, EXIT.usage);
    assert.match(bad.stderr, /^svc: --interval takes a positive duration/);
  });

  it('a server that goes away ends the watch with its error (exit 6)', async () => {
    const run = await svc('agents', 'list', '--watch', '--server', '127.0.0.1:1');
    assert.equal(run.code, EXIT.unavailable);
    assert.match(run.stderr, /^svc: UNAVAILABLE: no connection to the server at 127\.0\.0\.1:1/);
  });
});

describe('messages history and send', SUITE_TIMEOUT, () => {
  it("shows the agent's conversation over REST, filtered by type and limited, in every form", async () => {
    const { agent_id } = await s.client.deploy({ name: 'historian', wasm_module: ECHO });
    try {
      const sent = await svc('messages', 'send', agent_id, '-t', 'request', '-c', 'first', '--reply-with', 'r-1', '--protocol', 'fipa-request', '--conversation', 'conv-1', ...s.server);
      assert.equal(sent.code, EXIT.ok, sent.stderr);
      const messageId = sent.stdout.trim();
      await svc('messages', 'send', agent_id, '-t', 'request', '-c', 'second', ...s.server);
      const history = ['messages', 'history', agent_id, '--http-server', s.http];
      await until('both replies', () => svc(...history, '-o', 'json'), (run) => (JSON.parse(run.stdout) as { messages: unknown[] }).messages.length === 4);

      const table = await svc(...history);
      assert.equal(table.code, EXIT.ok, table.stderr);
      const lines = table.stdout.trimEnd().split('\n');
      assert.deepEqual(
        lines.map((l) => l.replace(/^\S+ {2}/, '')),
        [
          `client:anonymous -> ${agent_id}  request  "first"`,
          `${agent_id} -> client:anonymous  inform  "first"`,
          `client:anonymous -> ${agent_id}  request  "second"`,
          `${agent_id} -> client:anonymous  inform  "second"`,
        ],
      );
      const informs = JSON.parse((await svc(...history, '-t', 'inform', '-n', '1', '-o', 'json')).stdout) as { messages: Array<{ content: string }> };
      assert.deepEqual(informs.messages.map((m) => m.content), ['second']);
      const wide = await svc(...history, '-o', 'wide', '-n', '2', '-t', 'inform', '-t', 'request');
      assert.match(wide.stdout.split('\n')[0] ?? '', / request {2}conversation=\S+ {2}"second"$/);
      const first = (JSON.parse((await svc(...history, '-o', 'json')).stdout) as { messages: Array<{ message_id: string; reply_with: string; protocol: string; conversation_id: string; in_reply_to: string }> }).messages;
      assert.deepEqual(
        [first[0]?.message_id, first[0]?.reply_with, first[0]?.protocol, first[0]?.conversation_id, first[1]?.in_reply_to, first[1]?.conversation_id],
        [messageId, 'r-1', 'fipa-request', 'conv-1', 'r-1', 'conv-1'],
      );
    } finally {
      await s.client.undeploy(agent_id);
    }
  });

  it('an unknown agent is NOT_FOUND (exit 5) with the trace id; a bad --limit exit 2', async () => {
    const missing = await svc('messages', 'history', 'no-such-agent', '--http-server', s.http);
    assert.equal(missing.code, EXIT.not_found);
    assert.match(missing.stderr, /^svc: NOT_FOUND: .* \(trace [0-9a-f]{32}\)\n$/);
    const bad = await svc('messages', 'history', 'x', '-n', '0', '--http-server', s.http);
    assert.equal(bad.code, EXIT.usage);
    assert.match(bad.stderr, /^svc: --limit takes a positive integer, got '0'\n/);
    const invalid = await svc('messages', 'history', 'x', '-t', 'shout', '--http-server', s.http);
    assert.equal(invalid.code, EXIT.rejected, invalid.stderr);
    assert.match(invalid.stderr, /^svc: INVALID_ARGUMENT: /);
  });
});
