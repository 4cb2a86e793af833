/** docs/security.md shows what the server runs: the casbin model and policy as loaded, and a bootstrap key command that makes a key. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseKey } from '../../src/security/api-key-format.js';
import { DEFAULT_POLICY, RBAC_MODEL } from '../../src/security/rbac-policy.js';

const doc = readFileSync(fileURLToPath(new URL('../../docs/security.md', import.meta.url)), 'utf8');

test('the model and the built-in policy are shown as the server loads them', () => {
  assert.ok(doc.includes(`\`\`\`\n${RBAC_MODEL}\`\`\``), 'the model');
  assert.ok(doc.includes(`\`\`\`\n${DEFAULT_POLICY}\`\`\``), 'the policy');
});

test('the bootstrap key command makes a well-formed key', () => {
  const line = /export SVC_SECURITY_BOOTSTRAP_ADMIN_KEY="(.+)"\n/.exec(doc)?.[1];
  assert.ok(line, 'the command is in the doc');
  for (let i = 0; i < 5; i++) {
    const key = execFileSync('bash', ['-c', `echo "${line}"`], { encoding: 'utf8' }).trim();
    assert.ok(parseKey(key), key);
  }
});
