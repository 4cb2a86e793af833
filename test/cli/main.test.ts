import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { wat } from '../helpers/wat.js';
import { createGrpcClient } from '../../src/api/grpc/grpc-client.js';
import { runCli, startCli, type Run } from './run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI as a real process in `dir`; `untilStdout` sends SIGTERM once that text appears. */
function svc(args: string[], opts: { env?: Record<string, string>; untilStdout?: string } = {}): Promise<Run> {
  return runCli(args, { cwd: dir, ...opts });
}

function logLines(stdout: string): Array<Record<string, unknown>> {
  return stdout.trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('svc CLI', () => {
  it('start serves every listener on the embedded default addresses, creates ./data, and stops cleanly on SIGTERM', async () => {
    // A misspelt section sets nothing and is named in a warning (config/load.ts, `ignoredEnvNames`).
    const running = startCli(['start'], { cwd: dir, env: { SVC_OBSERVABILTY_FORMAT: 'pretty' } });
    let stdout = '';
    const listening = new Promise<void>((resolve, reject) => {
      running.child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('"msg":"listening"')) resolve();
      });
      void running.done.then((run) => reject(new Error(`svc exited (${run.code}) before listening: ${run.stderr}`)));
    });
    try {
      await listening;
      const line = logLines(stdout.split('\n').filter((l) => l.includes('"msg":"listening"')).join('\n'))[0];
      assert.deepEqual({ http: line?.http, grpc: line?.grpc, metrics: line?.metrics }, { http: '127.0.0.1:8080', grpc: '127.0.0.1:50051', metrics: '127.0.0.1:9090' });
      assert.deepEqual(await (await fetch('http://127.0.0.1:8080/health')).json(), { status: 'ok' });
      assert.equal((await fetch('http://127.0.0.1:8080/ready')).status, 200);
      const health = (await (await fetch('http://127.0.0.1:8080/api/v1/health', { headers: { 'X-Trace-Id': '0af7651916cd43dd8448eb211c80319c' } })).json()) as { status: string; trace_id: string };
      assert.equal(health.status, 'healthy');
      assert.equal(health.trace_id, '0af7651916cd43dd8448eb211c80319c');
      assert.match(await (await fetch('http://127.0.0.1:9090/metrics')).text(), /^# HELP svc_/m);
      const client = createGrpcClient('127.0.0.1:50051');
      try {
        assert.equal((await client.health()).status, 'healthy');
      } finally {
        client.close();
      }
    } finally {
      running.child.kill('SIGTERM');
    }
    const run = await running.done;
    assert.equal(run.code, 0, run.stderr);
    const lines = logLines(run.stdout);
    const started = lines.find((l) => l.msg === 'started');
    assert.ok(started, run.stdout);
    assert.equal(started.name, 'svc');
    assert.match(String(started.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.ok(lines.some((l) => l.msg === 'stopped'), 'logs stopped after SIGTERM');
    assert.ok(lines.some((l) => l.msg === 'authentication off: every caller is anonymous with every permission (plaintext)'), 'says authentication is off');
    const ignored = lines.find((l) => typeof l.msg === 'string' && l.msg.includes('name no configuration section'));
    assert.deepEqual(ignored?.variables, ['SVC_OBSERVABILTY_FORMAT'], run.stdout);
    assert.equal(ignored?.level, 40);
    assert.ok(existsSync(join(dir, 'data')), 'data directory created');
  });

  it('refuses an invalid configuration, naming the key, with exit code 3', async () => {
    const run = await svc(['start'], { env: { SVC_RUNTIME_EXECUTION_TIMEOUT: 'forever' } });
    assert.equal(run.code, 3);
    assert.match(run.stderr, /runtime\.execution_timeout/);
  });

  it('refuses a timeout longer than a timer can wait, naming the key, with exit code 3 (it used to exit 1 on a supervisor error)', async () => {
    const run = await svc(['start'], { env: { SVC_RUNTIME_AGENT_SHUTDOWN_TIMEOUT: '30d', SVC_HTTP_ADDR: '127.0.0.1:0', SVC_GRPC_ADDR: '127.0.0.1:0', SVC_METRICS_ADDR: '127.0.0.1:0' } });
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stderr, /^svc: invalid configuration: runtime\.agent_shutdown_timeout: /);
    assert.doesNotMatch(run.stdout, /"msg":"listening"/);
  });

  it('refuses an option it does not know instead of starting without it: exit code 2, nothing listening', async () => {
    const ephemeral = { SVC_HTTP_ADDR: '127.0.0.1:0', SVC_GRPC_ADDR: '127.0.0.1:0', SVC_METRICS_ADDR: '127.0.0.1:0' };
    for (const args of [['start', '--bogus'], ['start', 'runtime.max_agents=3'], ['config', '--verbose']]) {
      const run = await svc(args, { env: ephemeral });
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /^svc: (unknown option|unexpected argument) '/);
      assert.doesNotMatch(run.stdout, /"msg":"listening"/);
    }
  });

  it('refuses a misspelt --section.key flag by name with exit code 3, and reads the value after a spaced flag', async () => {
    const misspelt = await svc(['start', '--runtime.max-agents=3'], { env: { SVC_HTTP_ADDR: '127.0.0.1:0', SVC_GRPC_ADDR: '127.0.0.1:0', SVC_METRICS_ADDR: '127.0.0.1:0' } });
    assert.equal(misspelt.code, 3, misspelt.stderr);
    assert.match(misspelt.stderr, /^svc: invalid configuration: runtime\.max-agents: unknown setting/);
    const spaced = await svc(['config', '--runtime.max_agents', '3', '--config', join(dir, 'absent-is-refused.toml')]);
    assert.equal(spaced.code, 3);
    assert.match(spaced.stderr, /--config: file not found/);
  });

  it('says in one line whether authentication is on and with what; with it off, refuses a non-loopback address unless told', async () => {
    const ephemeral = { SVC_HTTP_ADDR: '127.0.0.1:0', SVC_GRPC_ADDR: '127.0.0.1:0', SVC_METRICS_ADDR: '127.0.0.1:0' };
    const on = await svc(['start'], { env: { ...ephemeral, SVC_SECURITY_AUTH_ENABLED: 'true' }, untilStdout: '"msg":"listening"' });
    assert.equal(on.code, 0, on.stderr);
    const line = logLines(on.stdout).find((l) => typeof l.msg === 'string' && l.msg.startsWith('authentication'));
    assert.deepEqual([line?.msg, line?.auth, line?.mechanisms], ['authentication on: API keys, JWT bearer tokens (plaintext)', true, ['api_key', 'jwt']]);
    const open = await svc(['start'], { env: { ...ephemeral, SVC_HTTP_ADDR: '0.0.0.0:0' } });
    assert.equal(open.code, 3);
    assert.match(open.stderr, /^svc: invalid configuration: security\.allow_unauthenticated: authentication is off and server\.http_addr \(0\.0\.0\.0:0\) is not a loopback address/);
    assert.doesNotMatch(open.stdout, /"msg":"listening"/);
  });

  it('check admits a valid module and prints what admission found', async () => {
    const file = join(dir, 'ok.wasm');
    writeFileSync(file, await wat('(module (memory (export "memory") 1 2) (func (export "handle")))'));
    const run = await svc(['check', file, '-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    const info = JSON.parse(run.stdout) as { sha256: string; memory: { maximumPages: number } };
    assert.match(info.sha256, /^[0-9a-f]{64}$/);
    assert.equal(info.memory.maximumPages, 2);
  });

  it('check rejects a hostile module with its code and reason, exit code 4', async () => {
    const file = join(dir, 'bad.wasm');
    writeFileSync(file, await wat('(module (import "wasi_snapshot_preview1" "path_open" (func)) (memory (export "memory") 1 2) (func (export "handle")))'));
    const run = await svc(['check', file]);
    assert.equal(run.code, 4);
    assert.match(run.stderr, /INVALID_MODULE/);
    assert.match(run.stderr, /wasi_snapshot_preview1\.path_open/);
  });

  it('answers an unknown command with usage and exit code 2', async () => {
    const run = await svc(['frobnicate']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /unknown command/);
  });
});
