/**
 * `svc keys`, `svc audit` and the credential flags, in-process against a
 * real server with authentication on (both doors on loopback).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../../src/cli/cli.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { ADMIN_KEY, startSecuredServer, type SecuredServer } from '../security/secured-server.js';
import { memoryIo, type MemoryIo } from './memory-io.js';

const home = mkdtempSync(join(tmpdir(), 'svc-cli-security-'));

describe('svc keys, svc audit and credentials against a server with authentication on', { timeout: 240_000 }, () => {
  let s: SecuredServer;
  async function svc(args: string[], env: Record<string, string> = {}): Promise<MemoryIo & { code: number }> {
    const io = memoryIo({ env, home, cwd: home });
    const code = await runCli([...args, '--server', s.grpcAddress], io);
    return Object.assign(io, { code });
  }

  before(async () => {
    s = await startSecuredServer();
  });
  after(async () => {
    await s.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('without a credential a call is refused: one line, exit code 7', async () => {
    const run = await svc(['agents', 'list']);
    assert.equal(run.code, EXIT.denied, run.stderr);
    assert.match(run.stderr, /^svc: UNAUTHENTICATED: authentication required reason=missing_credential \(trace [0-9a-f]{32}\)\n$/);
  });

  it('keys create prints the key once; list, rotate (the old secret keeps its grace) and revoke', async () => {
    const created = await svc(['keys', 'create', '-n', 'ops', '-r', 'operator', '-r', 'viewer', '--expires-in', '30d', '--api-key', ADMIN_KEY]);
    assert.equal(created.code, EXIT.ok, created.stderr);
    const key = created.stdout.trim();
    assert.match(key, /^svc_[a-z2-7]{16}_[A-Za-z0-9_-]{43}$/);
    assert.match(created.stderr, /the secret is not shown again/);
    const keyId = key.split('_')[1] as string;
    assert.equal((await svc(['agents', 'list'], { SVC_API_KEY: key })).code, EXIT.ok, 'SVC_API_KEY');

    const listed = await svc(['keys', 'list', '-o', 'json'], { SVC_API_KEY: ADMIN_KEY });
    const keys = (JSON.parse(listed.stdout) as { keys: Array<{ key_id: string; roles: string[]; state: string; expires_at: string }> }).keys;
    const ops = keys.find((k) => k.key_id === keyId);
    assert.deepEqual([ops?.roles, ops?.state], [['operator', 'viewer'], 'active']);
    assert.notEqual(ops?.expires_at, '');
    assert.ok(!listed.stdout.includes(key.split('_').slice(2).join('_')), 'no secret is listed');
    assert.match((await svc(['keys', 'list', '-o', 'wide'], { SVC_API_KEY: ADMIN_KEY })).stdout, /^KEY_ID +NAME +ROLES +STATE +CREATED +EXPIRES +GRACE_UNTIL +ROTATED +REVOKED +RATE_PER_HOUR\n/);

    const rotated = await svc(['keys', 'rotate', keyId, '--api-key', ADMIN_KEY]);
    assert.equal(rotated.code, EXIT.ok, rotated.stderr);
    assert.match(rotated.stderr, /the old secret works until /);
    const fresh = rotated.stdout.trim();
    assert.notEqual(fresh, key);
    assert.equal((await svc(['agents', 'list', '--api-key', key])).code, EXIT.ok, 'the old secret within its grace period');
    assert.equal((await svc(['agents', 'list', '--api-key', fresh])).code, EXIT.ok);

    const revoked = await svc(['keys', 'revoke', keyId, '--api-key', ADMIN_KEY]);
    assert.deepEqual([revoked.code, revoked.stdout], [EXIT.ok, `revoked ${keyId}\n`]);
    assert.equal((await svc(['agents', 'list', '--api-key', fresh])).code, EXIT.denied);
  });

  it('a key without the permission: PERMISSION_DENIED, exit code 7', async () => {
    const viewer = (await svc(['keys', 'create', '-n', 'v', '-r', 'viewer', '--api-key', ADMIN_KEY])).stdout.trim();
    const run = await svc(['keys', 'list', '--api-key', viewer]);
    assert.equal(run.code, EXIT.denied);
    assert.match(run.stderr, /PERMISSION_DENIED: .* permission=system:configure/);
  });

  it('--token and SVC_TOKEN carry a bearer token; flags win over the environment, the environment over the context', async () => {
    const { access_token: token } = await s.grpc({ apiKey: ADMIN_KEY }).createToken();
    assert.equal((await svc(['keys', 'list', '--token', token])).code, EXIT.ok);
    assert.equal((await svc(['keys', 'list'], { SVC_TOKEN: token })).code, EXIT.ok);
    assert.equal((await svc(['keys', 'list', '--token', token], { SVC_API_KEY: 'svc_nonsense' })).code, EXIT.ok, 'a flag wins over the environment');
    const set = await svc(['context', 'set', 'stale', '--api-key', 'svc_aaaaaaaaaaaaaaaa_stale', '--use']);
    assert.equal(set.code, EXIT.ok, set.stderr);
    assert.equal((await svc(['keys', 'list'], { SVC_API_KEY: ADMIN_KEY })).code, EXIT.ok, 'the environment wins over the context');
    assert.equal((await svc(['keys', 'list'])).code, EXIT.denied, "the context's key is used when nothing else is given");
    const both = await svc(['keys', 'list', '--token', token, '--api-key', ADMIN_KEY]);
    assert.equal(both.code, EXIT.usage);
    assert.match(both.stderr, /--api-key and --token are both given/);
    assert.equal((await svc(['keys', 'create', '-n', 'x', '--expires-in', 'soon', '--api-key', ADMIN_KEY])).code, EXIT.usage);
  });

  it('svc audit lists the records newest first, filtered, as a table or JSON', async () => {
    const run = await svc(['audit', '-e', 'admin_action', '--since', '1h', '--api-key', ADMIN_KEY]);
    assert.equal(run.code, EXIT.ok, run.stderr);
    const [header, ...rows] = run.stdout.trim().split('\n');
    assert.match(header ?? '', /^TIME +EVENT +OUTCOME +PRINCIPAL +OPERATION +RESOURCE +SOURCE +REASON$/);
    assert.ok(rows.length >= 4 && rows.every((row) => row.includes('admin_action')), run.stdout);
    assert.ok(rows.some((row) => row.includes('RevokeKey')) && rows.some((row) => row.includes('RotateKey')));
    const records = (JSON.parse((await svc(['audit', '-e', 'authentication', '-l', '2', '-o', 'json', '--api-key', ADMIN_KEY])).stdout) as { records: Array<{ event: string }> }).records;
    assert.deepEqual(records.map((r) => r.event), ['authentication', 'authentication']);
    assert.equal((await svc(['audit', '--since', 'yesterday', '--api-key', ADMIN_KEY])).code, EXIT.usage);
    assert.equal((await svc(['audit', '-e', 'logins', '--api-key', ADMIN_KEY])).code, EXIT.usage);
  });
});
