import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, envName, ignoredEnvNames, loadConfig } from '../../src/config/load.js';
import { CONFIG_SCHEMA } from '../../src/config/schema.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function toml(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  return path;
}

function refusal(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the configuration to be refused');
}

describe('loadConfig', () => {
  it('gives the documented defaults with no sources', () => {
    const config = loadConfig({ cwd: dir, env: {} });
    assert.equal(config.server.http_addr, '127.0.0.1:8080');
    assert.equal(config.server.grpc_addr, '127.0.0.1:50051');
    assert.equal(config.server.metrics_addr, '127.0.0.1:9090');
    assert.equal(config.storage.data_dir, './data');
    assert.equal(config.runtime.execution_timeout, 30_000);
    assert.equal(config.runtime.agent_idle_timeout, 300_000);
    assert.equal(config.runtime.agent_startup_timeout, 10_000);
    assert.equal(config.runtime.agent_shutdown_timeout, 5_000);
    assert.equal(config.runtime.max_memory_pages, 1024);
    assert.equal(config.runtime.max_module_size, 10 * 1024 * 1024);
    assert.equal(config.runtime.cpu_quota_per_agent, 100);
    assert.equal(config.observability.trace_sample_rate, 0.1);
    assert.deepEqual(config.cluster.seeds, []);
  });

  it('layers TOML, then environment, then flags', () => {
    const file = toml('layers.toml', '[runtime]\nexecution_timeout = "2s"\nmax_agents = 5\n[server]\nhttp_addr = "127.0.0.1:0"\n');
    const config = loadConfig({
      cwd: dir,
      argv: ['--config', file, '--runtime.max_agents=7'],
      env: { SVC_RUNTIME_EXECUTION_TIMEOUT: '1500ms', SVC_RUNTIME_MAX_AGENTS: '6' },
    });
    assert.equal(config.runtime.execution_timeout, 1500);
    assert.equal(config.runtime.max_agents, 7);
    assert.equal(config.server.http_addr, '127.0.0.1:0');
  });

  it('reads SVC_CONFIG and ./svc.toml', () => {
    const file = toml('other.toml', '[runtime]\nmax_agents = 3\n');
    assert.equal(loadConfig({ cwd: dir, env: { SVC_CONFIG: file } }).runtime.max_agents, 3);
    const local = mkdtempSync(join(dir, 'cwd-'));
    writeFileSync(join(local, 'svc.toml'), '[runtime]\nmax_agents = 4\n');
    assert.equal(loadConfig({ cwd: local, env: {} }).runtime.max_agents, 4);
  });

  it('applies the shortcuts, and the full variable name wins over a shortcut', () => {
    const config = loadConfig({
      cwd: dir,
      env: { SVC_HTTP_ADDR: '127.0.0.1:1', SVC_GRPC_ADDR: '127.0.0.1:2', SVC_METRICS_ADDR: '[::1]:3', SVC_DATA_DIR: '/tmp/x', SVC_SERVER_GRPC_ADDR: '127.0.0.1:9', SVC_CLUSTER_ADDR: '127.0.0.1:7946', SVC_CLUSTER_SEEDS: '127.0.0.1:1, 127.0.0.1:2' },
    });
    assert.equal(config.server.http_addr, '127.0.0.1:1');
    assert.equal(config.server.grpc_addr, '127.0.0.1:9');
    assert.equal(config.server.metrics_addr, '[::1]:3');
    assert.equal(config.storage.data_dir, '/tmp/x');
    assert.equal(config.cluster.addr, '127.0.0.1:7946');
    assert.deepEqual(config.cluster.seeds, ['127.0.0.1:1', '127.0.0.1:2']);
  });

  it('reads a ratio in any decimal spelling', () => {
    for (const [text, value] of [['1', 1], ['0', 0], ['0.25', 0.25], ['.5', 0.5], ['1.', 1], ['1e-1', 0.1], [' 0.3 ', 0.3]] as const) {
      assert.equal(loadConfig({ cwd: dir, env: { SVC_OBSERVABILITY_TRACE_SAMPLE_RATE: text } }).observability.trace_sample_rate, value, text);
    }
  });

  it('parses every unit syntax', () => {
    const env = {
      SVC_RUNTIME_EXECUTION_TIMEOUT: '5m',
      SVC_RUNTIME_MAX_EXECUTION_TIME: '1h',
      SVC_RUNTIME_AGENT_IDLE_TIMEOUT: '30d',
      SVC_RUNTIME_AGENT_STARTUP_TIMEOUT: '250',
      SVC_RUNTIME_WASM_MEMORY_TOTAL: '512MB',
      SVC_RUNTIME_MAX_MODULE_SIZE: '64KiB',
      SVC_RUNTIME_MAX_DISK_IO_BYTES: '1000',
      SVC_RUNTIME_CPU_QUOTA_PER_AGENT: '2',
      SVC_OBSERVABILITY_OTLP_HEADERS: 'a=1,b=2',
    };
    const config = loadConfig({ cwd: dir, env });
    assert.equal(config.runtime.execution_timeout, 300_000);
    assert.equal(config.runtime.agent_idle_timeout, 30 * 86_400_000);
    assert.equal(config.runtime.agent_startup_timeout, 250);
    assert.equal(config.runtime.wasm_memory_total, 512_000_000);
    assert.equal(config.runtime.max_module_size, 65_536);
    assert.equal(config.runtime.max_disk_io_bytes, 1000);
    assert.equal(config.runtime.cpu_quota_per_agent, 2000);
    assert.deepEqual(config.observability.otlp_headers, { a: '1', b: '2' });
  });

  const refused: Array<[string, () => unknown, string]> = [
    ['a bad duration', () => loadConfig({ cwd: dir, env: { SVC_RUNTIME_EXECUTION_TIMEOUT: 'soon' } }), 'runtime.execution_timeout'],
    ['a bad size', () => loadConfig({ cwd: dir, env: { SVC_RUNTIME_MAX_MODULE_SIZE: '10 parsecs' } }), 'runtime.max_module_size'],
    ['a bad boolean', () => loadConfig({ cwd: dir, env: { SVC_SECURITY_AUTH_ENABLED: 'maybe' } }), 'security.auth_enabled'],
    ['a bad address', () => loadConfig({ cwd: dir, env: { SVC_HTTP_ADDR: 'localhost' } }), 'server.http_addr'],
    ['a port out of range', () => loadConfig({ cwd: dir, env: { SVC_GRPC_ADDR: '127.0.0.1:70000' } }), 'server.grpc_addr'],
    ['an enum outside its values', () => loadConfig({ cwd: dir, env: { SVC_OBSERVABILITY_FORMAT: 'xml' } }), 'observability.format'],
    ['a ratio above 1', () => loadConfig({ cwd: dir, env: { SVC_OBSERVABILITY_TRACE_SAMPLE_RATE: '1.5' } }), 'observability.trace_sample_rate'],
    // Number() reads these; a ratio is written in decimal.
    ['a ratio in hexadecimal', () => loadConfig({ cwd: dir, env: { SVC_OBSERVABILITY_TRACE_SAMPLE_RATE: '0x1' } }), 'observability.trace_sample_rate'],
    ['a ratio in binary', () => loadConfig({ cwd: dir, env: { SVC_OBSERVABILITY_TRACE_SAMPLE_RATE: '0b1' } }), 'observability.trace_sample_rate'],
    ['a negative ratio', () => loadConfig({ cwd: dir, env: { SVC_OBSERVABILITY_DEBUG_SAMPLE_RATE: '-0.5' } }), 'observability.debug_sample_rate'],
    ['an empty ratio', () => loadConfig({ cwd: dir, env: { SVC_OBSERVABILITY_TRACE_SAMPLE_RATE: ' ' } }), 'observability.trace_sample_rate'],
    ['an unknown environment key', () => loadConfig({ cwd: dir, env: { SVC_RUNTIME_EXECUTON_TIMEOUT: '1s' } }), 'runtime.executon_timeout'],
    ['an unknown flag key', () => loadConfig({ cwd: dir, env: {}, argv: ['--runtime.nope=1'] }), 'runtime.nope'],
    ['a flag key with a hyphen for an underscore', () => loadConfig({ cwd: dir, env: {}, argv: ['--runtime.max-agents=3'] }), 'runtime.max-agents'],
    ['a flag section in capitals', () => loadConfig({ cwd: dir, env: {}, argv: ['--Runtime.max_agents', '3'] }), 'Runtime.max_agents'],
    ['a wrong TOML type', () => loadConfig({ cwd: dir, env: {}, argv: ['--config', toml('t.toml', '[runtime]\nmax_agents = "many"\n')] }), 'runtime.max_agents'],
    ['an unknown TOML section', () => loadConfig({ cwd: dir, env: {}, argv: ['--config', toml('s.toml', '[nope]\nx = 1\n')] }), 'nope'],
    ['an unknown TOML key', () => loadConfig({ cwd: dir, env: {}, argv: ['--config', toml('k.toml', '[server]\nport = 1\n')] }), 'server.port'],
    ['broken TOML', () => loadConfig({ cwd: dir, env: {}, argv: ['--config', toml('b.toml', '[server\n')] }), join(dir, 'b.toml')],
    ['a missing file', () => loadConfig({ cwd: dir, env: {}, argv: ['--config', join(dir, 'absent.toml')] }), '--config'],
    ['an execution timeout over its bound', () => loadConfig({ cwd: dir, env: { SVC_RUNTIME_EXECUTION_TIMEOUT: '2m' } }), 'runtime.execution_timeout'],
    ['a stack over its bound', () => loadConfig({ cwd: dir, env: { SVC_RUNTIME_WASM_STACK_LIMIT: '64MiB' } }), 'runtime.wasm_stack_limit'],
    ['a flag without value', () => loadConfig({ cwd: dir, env: {}, argv: ['--runtime.max_agents'] }), 'runtime.max_agents'],
    // A Node timer longer than 2^31 - 1 ms fires after 1 ms: every request failed, or the server did not start.
    ['a request timeout longer than a timer can wait', () => loadConfig({ cwd: dir, env: { SVC_SERVER_REQUEST_TIMEOUT: '30d' } }), 'server.request_timeout'],
    ['a shutdown timeout longer than a timer can wait', () => loadConfig({ cwd: dir, env: {}, argv: ['--runtime.agent_shutdown_timeout=25d'] }), 'runtime.agent_shutdown_timeout'],
    // 0 failed every request at once too (a 504 before any work).
    ['a request timeout of 0', () => loadConfig({ cwd: dir, env: { SVC_SERVER_REQUEST_TIMEOUT: '0' } }), 'server.request_timeout'],
    ['an execution timeout of 0ms', () => loadConfig({ cwd: dir, env: {}, argv: ['--runtime.execution_timeout=0ms'] }), 'runtime.execution_timeout'],
  ];

  it('takes a timer-bound duration up to 2^31 - 1 ms, and any idle timeout', () => {
    const config = loadConfig({ cwd: dir, env: { SVC_SERVER_KEEPALIVE_TIMEOUT: '24d', SVC_OBSERVABILITY_OTLP_TIMEOUT: String(2 ** 31 - 1), SVC_RUNTIME_AGENT_IDLE_TIMEOUT: '365d' } });
    assert.equal(config.server.keepalive_timeout, 24 * 86_400_000);
    assert.equal(config.observability.otlp_timeout, 2 ** 31 - 1);
    assert.equal(config.runtime.agent_idle_timeout, 365 * 86_400_000);
    for (const key of ['connection_timeout', 'request_timeout', 'keepalive_timeout'] as const) {
      assert.equal(refusal(() => loadConfig({ cwd: dir, env: { [envName('server', key)]: String(2 ** 31) } })).key, `server.${key}`);
    }
  });
  for (const [what, fn, key] of refused) {
    it(`refuses ${what} and names ${key}`, () => {
      const err = refusal(fn);
      assert.equal(err.key, key);
      assert.ok(err.message.startsWith(`${key}: `), err.message);
    });
  }

  it('starts with SVC_ variables that name no section, and names them as ignored', () => {
    const env = {
      SVC_OBSERVABILTY_FORMAT: 'pretty',
      SVC_SERVICE_HOST: '10.0.0.1',
      SVC_PORT: 'tcp://10.0.0.1:80',
      SVC_CONFIG: join(dir, 'absent-is-fine-here.toml'),
      SVC_HTTP_ADDR: '127.0.0.1:0',
      SVC_RUNTIME_MAX_AGENTS: '5',
      NOT_SVC_RUNTIME_X: '1',
    };
    const { SVC_CONFIG: _file, ...loadable } = env;
    const config = loadConfig({ cwd: dir, env: loadable });
    assert.equal(config.observability.format, 'json', 'the misspelt section set nothing');
    assert.equal(config.runtime.max_agents, 5);
    assert.deepEqual(ignoredEnvNames(env), ['SVC_OBSERVABILTY_FORMAT', 'SVC_PORT', 'SVC_SERVICE_HOST']);
    assert.deepEqual(ignoredEnvNames({ SVC_RUNTIME_NOPE: '1', SVC_X: undefined }), [], 'an unknown key of a known section is refused by the loader instead');
  });

  it('never repeats a secret\'s value in its error, from a flag or the environment', () => {
    const typo = 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0MTI=';
    for (const source of [{ argv: [`--cluster.secret=${typo}`], env: {} }, { argv: [], env: { SVC_CLUSTER_SECRET: typo } }]) {
      assert.throws(
        () => loadConfig(source),
        (error: unknown) => error instanceof ConfigError && error.key === 'cluster.secret' && !error.message.includes(typo) && !error.message.includes('c2VjcmV0') && /value not shown/.test(error.message),
      );
    }
  });

  it('has a doc string and an environment name for every setting', () => {
    for (const [section, settings] of Object.entries(CONFIG_SCHEMA)) {
      for (const [key, setting] of Object.entries(settings)) {
        assert.ok(setting.doc.length > 10, `${section}.${key} needs a doc`);
        const name = envName(section as keyof typeof CONFIG_SCHEMA, key);
        assert.match(name, /^SVC_[A-Z]+_[A-Z0-9_]+$/);
        assert.doesNotThrow(() => loadConfig({ cwd: dir, env: { [name]: setting.format(setting.default as never) } }), `${name} round-trips its default`);
      }
    }
  });
});
