/**
 * Contexts: the file under XDG_CONFIG_HOME (or ~/.config), `svc context
 * set|use|list|current|delete` run in-process, how a command picks its
 * server (flag, then context, then configuration), and refusals of a bad
 * file, name or value.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from '../../src/cli/cli.js';
import { resolveConnection } from '../../src/cli/connection.js';
import { contextFilePath, readContexts } from '../../src/cli/contexts.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { memoryIo, type MemoryIo } from './memory-io.js';

const root = mkdtempSync(join(tmpdir(), 'svc-contexts-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A fresh home and working directory; XDG_CONFIG_HOME unset unless given. */
function world(env: Record<string, string> = {}): { home: string; cwd: string; env: Record<string, string> } {
  const dir = join(root, String(++n));
  const home = join(dir, 'home');
  const cwd = join(dir, 'work');
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  return { home, cwd, env };
}

async function svc(w: ReturnType<typeof world>, ...args: string[]): Promise<MemoryIo & { code: number }> {
  const io = memoryIo(w);
  const code = await runCli(args, io);
  return Object.assign(io, { code });
}

describe('the context file', () => {
  it('lives in $XDG_CONFIG_HOME/svc/config.toml, else ~/.config/svc/config.toml (a relative XDG_CONFIG_HOME is ignored)', () => {
    assert.equal(contextFilePath({ XDG_CONFIG_HOME: '/x/conf' }, '/home/u'), '/x/conf/svc/config.toml');
    assert.equal(contextFilePath({}, '/home/u'), '/home/u/.config/svc/config.toml');
    assert.equal(contextFilePath({ XDG_CONFIG_HOME: 'relative' }, '/home/u'), '/home/u/.config/svc/config.toml');
  });

  it('set writes it with mode 0600 in a directory of mode 0700, and keeps other fields on a later set', async () => {
    const w = world();
    const created = await svc(w, 'context', 'set', 'local', '--server', '127.0.0.1:50052', '--api-key', 'svc_k1_secret');
    assert.equal(created.code, EXIT.ok, created.stderr);
    assert.equal(created.stdout, 'created context local\n');
    const path = join(w.home, '.config', 'svc', 'config.toml');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(w.home, '.config', 'svc')).mode & 0o777, 0o700);
    const updated = await svc(w, 'context', 'set', 'local', '--http-server', '127.0.0.1:8081', '--tls-ca', 'ca.pem');
    assert.equal(updated.stdout, 'updated context local\n');
    assert.deepEqual(readContexts(path).contexts.local, { server: '127.0.0.1:50052', api_key: 'svc_k1_secret', http_server: '127.0.0.1:8081', tls_ca_file: join(w.cwd, 'ca.pem') });
    const unset = await svc(w, 'context', 'set', 'local', '--unset', 'api_key', '--unset', 'tls_ca_file');
    assert.equal(unset.code, EXIT.ok, unset.stderr);
    assert.deepEqual(readContexts(path).contexts.local, { server: '127.0.0.1:50052', http_server: '127.0.0.1:8081' });
  });

  it('honours XDG_CONFIG_HOME', async () => {
    const w = world();
    const xdg = join(w.home, 'xdg');
    const run = await svc({ ...w, env: { XDG_CONFIG_HOME: xdg } }, 'context', 'set', 'a', '-s', '127.0.0.1:1', '--use');
    assert.equal(run.code, EXIT.ok, run.stderr);
    assert.equal(readContexts(join(xdg, 'svc', 'config.toml')).current_context, 'a');
  });

  it('use, current, list (credentials redacted) and delete', async () => {
    const w = world();
    assert.equal((await svc(w, 'context', 'current')).code, EXIT.not_found);
    await svc(w, 'context', 'set', 'dev', '-s', '127.0.0.1:50051');
    await svc(w, 'context', 'set', 'prod', '-s', 'svc.example.net:50051', '--token', 'eyJ.secret.sig', '--tls-ca', '/etc/ca.pem');
    const used = await svc(w, 'context', 'use', 'prod');
    assert.deepEqual([used.code, used.stdout], [EXIT.ok, 'switched to context prod\n']);
    assert.equal((await svc(w, 'context', 'current')).stdout, 'prod\n');

    const listed = await svc(w, 'context', 'list');
    assert.equal(
      listed.stdout,
      [
        'CURRENT  NAME  SERVER                 HTTP_SERVER  TLS  CREDENTIALS',
        '         dev   127.0.0.1:50051        -            no   -',
        '*        prod  svc.example.net:50051  -            yes  token',
        '',
      ].join('\n'),
    );
    const json = JSON.parse((await svc(w, 'context', 'list', '-o', 'json')).stdout) as { contexts: Array<Record<string, unknown>> };
    assert.deepEqual(json.contexts[1], { name: 'prod', current: true, server: 'svc.example.net:50051', token: '(set)', tls_ca_file: '/etc/ca.pem' });
    assert.doesNotMatch((await svc(w, 'context', 'list', '-o', 'yaml')).stdout, /eyJ/);

    const deleted = await svc(w, 'context', 'delete', 'prod');
    assert.deepEqual([deleted.code, deleted.stdout], [EXIT.ok, 'deleted context prod; no context is current now\n']);
    assert.equal((await svc(w, 'context', 'current')).code, EXIT.not_found);
    assert.deepEqual(Object.keys(readContexts(contextFilePath({}, w.home)).contexts), ['dev']);
  });

  const refusals: Array<[string, string[], number, RegExp]> = [
    ['an unknown context to use', ['context', 'use', 'nope'], EXIT.not_found, /^svc: NOT_FOUND: no context named 'nope' in .*config\.toml context=nope\n$/],
    ['an unknown context to delete', ['context', 'delete', 'nope'], EXIT.not_found, /^svc: NOT_FOUND: no context named 'nope'/],
    ['a bad name', ['context', 'set', '../x', '-s', '127.0.0.1:1'], EXIT.usage, /^svc: a context name is 1 to 64 letters/],
    ['a bad address', ['context', 'set', 'x', '-s', 'nohost'], EXIT.usage, /^svc: --server: server takes HOST:PORT, got 'nohost'\n/],
    ['an empty value', ['context', 'set', 'x', '--token', ''], EXIT.usage, /^svc: --token needs a value; use --unset token to remove it\n/],
    ['an unknown field to unset', ['context', 'set', 'x', '--unset', 'password'], EXIT.usage, /^svc: --unset must be one of server, http_server, /],
    ['set and unset at once', ['context', 'set', 'x', '--token', 't', '--unset', 'token'], EXIT.usage, /^svc: token is both set and unset\n/],
    ['an unknown --context', ['health', '--context', 'nope'], EXIT.usage, /^svc: no context named 'nope' in /],
  ];
  for (const [name, args, code, stderr] of refusals) {
    it(`refuses ${name}: exit ${code}, one line, the file unchanged`, async () => {
      const w = world();
      await svc(w, 'context', 'set', 'x', '-s', '127.0.0.1:9');
      const before = readFileSync(contextFilePath({}, w.home), 'utf8');
      const run = await svc(w, ...args);
      assert.equal(run.code, code, run.stderr);
      assert.match(run.stderr, stderr);
      assert.equal(readFileSync(contextFilePath({}, w.home), 'utf8'), before);
    });
  }

  const badFiles: Array<[string, string, RegExp]> = [
    ['not TOML', 'current_context = ', /^svc: invalid configuration: .*config\.toml: cannot read TOML/],
    ['an unknown key', 'colour = "red"\n', /^svc: invalid configuration: .*config\.toml: colour: unknown key/],
    ['an unknown field', '[contexts.a]\npassword = "x"\n', /^svc: invalid configuration: .*contexts\.a\.password: unknown field/],
    ['a value of the wrong type', '[contexts.a]\nserver = 5\n', /contexts\.a\.server: must be a string/],
    ['a bad address', '[contexts.a]\nserver = "nohost"\n', /contexts\.a\.server: server takes HOST:PORT, got 'nohost'/],
    ['a current context that does not exist', 'current_context = "gone"\n', /current_context: names no context: 'gone'/],
  ];
  for (const [name, text, stderr] of badFiles) {
    it(`a file with ${name} stops client commands with exit 3, naming the key`, async () => {
      const w = world();
      const path = contextFilePath({}, w.home);
      mkdirSync(join(w.home, '.config', 'svc'), { recursive: true });
      writeFileSync(path, text);
      const run = await svc(w, 'health', '--server', '127.0.0.1:1');
      assert.equal(run.code, EXIT.config, run.stderr);
      assert.match(run.stderr, stderr);
    });
  }
});

describe('where a command connects', () => {
  it('the flag, else the context, else the configuration (SVC_GRPC_ADDR, a wildcard reached through loopback)', async () => {
    const w = world({ SVC_GRPC_ADDR: '0.0.0.0:7001', SVC_HTTP_ADDR: '127.0.0.1:7002' });
    const resolve = (values: Record<string, string> = {}) => resolveConnection(values, memoryIo(w));
    assert.deepEqual([resolve().grpcAddress(), resolve().httpAddress()], ['127.0.0.1:7001', '127.0.0.1:7002']);
    await svc(w, 'context', 'set', 'c', '-s', '10.0.0.1:50051', '--http-server', '10.0.0.1:8080', '--use');
    await svc(w, 'context', 'set', 'other', '-s', '10.0.0.2:50051');
    assert.deepEqual([resolve().grpcAddress(), resolve().httpAddress(), resolve().context], ['10.0.0.1:50051', '10.0.0.1:8080', 'c']);
    assert.equal(resolve({ context: 'other' }).grpcAddress(), '10.0.0.2:50051');
    assert.equal(resolve({ context: 'other' }).httpAddress(), '127.0.0.1:7002', 'a field the context lacks comes from the configuration');
    assert.equal(resolve({ server: '10.0.0.3:1', context: 'other' }).grpcAddress(), '10.0.0.3:1');
  });

  it('a context whose TLS file cannot be read stops the command with exit 3, naming the field', async () => {
    const w = world();
    await svc(w, 'context', 'set', 'tls', '-s', '127.0.0.1:1', '--tls-ca', 'missing.pem', '--use');
    const run = await svc(w, 'health');
    assert.equal(run.code, EXIT.config);
    assert.match(run.stderr, /^svc: invalid configuration: context tls: tls_ca_file: cannot read .*missing\.pem \(ENOENT\)\n$/);
  });
});
