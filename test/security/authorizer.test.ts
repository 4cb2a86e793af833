/**
 * The permission table of DESIGN.md section 9, written out here role by
 * role rather than read from the code, against the built-in casbin policy
 * and against a policy file.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/config/load.js';
import { createAuthorizer } from '../../src/security/authorizer.js';
import { PERMISSIONS, type Permission } from '../../src/security/permissions.js';
import type { Principal } from '../../src/security/principal.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-policy-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** DESIGN.md section 9: admin inherits operator and viewer plus delete, configure, audit — not the agent role's message permissions. */
const TABLE: Readonly<Record<string, readonly Permission[]>> = {
  admin: ['agent:create', 'agent:update', 'agent:view', 'metrics:view', 'agent:delete', 'system:configure', 'audit:view'],
  operator: ['agent:create', 'agent:update', 'agent:view', 'metrics:view'],
  viewer: ['agent:view', 'metrics:view'],
  agent: ['message:send', 'message:receive'],
  nobody: [],
};

const holder = (roles: string[], id = 'key:test'): Principal => ({ id, roles, kind: 'api_key' });

test('the built-in policy grants each role exactly its permissions of the table', async () => {
  const authorizer = await createAuthorizer('');
  for (const [role, granted] of Object.entries(TABLE)) {
    for (const permission of PERMISSIONS) {
      assert.equal(authorizer.allowed(holder([role]), permission), granted.includes(permission), `${role} ${permission}`);
    }
  }
  assert.deepEqual([...authorizer.roles].sort(), ['admin', 'agent', 'operator', 'viewer']);
});

test('roles add up: admin with agent may also message', async () => {
  const authorizer = await createAuthorizer('');
  for (const permission of PERMISSIONS) assert.equal(authorizer.allowed(holder(['admin', 'agent']), permission), true, permission);
  assert.equal(authorizer.allowed(holder([]), 'agent:view'), false);
});

test('a policy file replaces the built-in one; its g lines give principals (a certificate\'s CN) roles', async () => {
  const file = join(dir, 'policy.csv');
  writeFileSync(file, ['# read-only auditors and one gateway', 'p, auditor, audit, view', 'p, auditor, agent, view', 'g, cert:gateway, auditor', ''].join('\n'));
  const authorizer = await createAuthorizer(file);
  assert.equal(authorizer.allowed(holder([], 'cert:gateway'), 'audit:view'), true);
  assert.equal(authorizer.allowed(holder([], 'cert:gateway'), 'agent:view'), true);
  assert.equal(authorizer.allowed(holder([], 'cert:gateway'), 'agent:create'), false);
  assert.equal(authorizer.allowed(holder(['admin']), 'agent:delete'), false, 'the built-in roles are gone');
  assert.deepEqual([...authorizer.roles], ['auditor']);
});

test('a policy file that cannot be read or holds anything but p and g lines stops the start, naming policy_file', async () => {
  const bad = join(dir, 'bad.csv');
  for (const [content, pattern] of [['p, viewer, agent', /line 1/], ['x, a, b, c', /line 1/], ['p, viewer, agent, view\ng, lonely', /line 2/], ['# only comments\n', /grants nothing/]] as const) {
    writeFileSync(bad, content);
    await assert.rejects(createAuthorizer(bad), (err: unknown) => err instanceof ConfigError && err.key === 'security.policy_file' && pattern.test(err.message), content);
  }
  await assert.rejects(createAuthorizer(join(dir, 'missing.csv')), (err: unknown) => err instanceof ConfigError && /cannot read/.test(err.message));
});
