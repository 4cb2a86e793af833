/**
 * The one permission table both doors read (DESIGN.md section 9): casbin's
 * `rbac` model over the built-in policy, or `policy_file` in its place. A
 * principal may do what any of its roles (its credential's, and those the
 * policy's `g` lines give it) or the principal itself is granted.
 * Decisions are cached: the policy does not change while the server runs.
 */
import { readFileSync } from 'node:fs';
import { newEnforcer, newModelFromString, StringAdapter, type Enforcer } from 'casbin';
import { ConfigError } from '../config/load.js';
import { splitPermission, type Permission } from './permissions.js';
import type { Principal } from './principal.js';
import { DEFAULT_POLICY, RBAC_MODEL } from './rbac-policy.js';

/** Decisions kept; a fresh decision costs casbin's matcher per role. */
const CACHED_DECISIONS = 10_000;

export interface Authorizer {
  allowed(principal: Principal, permission: Permission): boolean;
  /** Role names the policy grants something to or assigns (for checking a new key's roles). */
  readonly roles: ReadonlySet<string>;
}

async function enforcerFor(policy: string): Promise<Enforcer> {
  return newEnforcer(newModelFromString(RBAC_MODEL), new StringAdapter(policy));
}

/** Only `p` lines of three fields and `g` lines of two: anything else is a mistake the operator should hear of. */
function checkPolicy(text: string): void {
  text.split('\n').forEach((line, index) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const fields = trimmed.split(',').map((f) => f.trim());
    const ok = (fields[0] === 'p' && fields.length === 4) || (fields[0] === 'g' && fields.length === 3);
    if (!ok || fields.some((f) => f === '')) {
      throw new ConfigError('security.policy_file', `line ${index + 1} is neither "p, subject, object, action" nor "g, principal, role": ${trimmed}`);
    }
  });
}

export async function createAuthorizer(policyFile: string): Promise<Authorizer> {
  let policy = DEFAULT_POLICY;
  if (policyFile !== '') {
    try {
      policy = readFileSync(policyFile, 'utf8');
    } catch (err) {
      throw new ConfigError('security.policy_file', `cannot read ${policyFile}: ${err instanceof Error ? err.message : String(err)}`);
    }
    checkPolicy(policy);
    // Comment lines are ours, not casbin's.
    policy = policy
      .split('\n')
      .filter((line) => !line.trim().startsWith('#'))
      .join('\n');
    if (policy.trim() === '') throw new ConfigError('security.policy_file', `${policyFile} grants nothing`);
  }
  const enforcer = await enforcerFor(policy);
  const roles = new Set<string>([...(await enforcer.getAllSubjects()), ...(await enforcer.getAllRoles())].filter((name) => !name.includes(':')));
  const decisions = new Map<string, boolean>();

  return {
    roles,
    allowed(principal, permission) {
      const key = `${principal.id}\u0000${principal.roles.join('\u0000')}\u0000${permission}`;
      let allowed = decisions.get(key);
      if (allowed === undefined) {
        const { object, action } = splitPermission(permission);
        allowed = [principal.id, ...principal.roles].some((subject) => enforcer.enforceSync(subject, object, action));
        if (decisions.size >= CACHED_DECISIONS) decisions.clear();
        decisions.set(key, allowed);
      }
      return allowed;
    },
  };
}
