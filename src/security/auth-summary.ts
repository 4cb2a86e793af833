/**
 * The one line `svc start` logs about authentication: whether it is on and
 * what can authenticate a caller, so an operator sees at a glance what the
 * listeners enforce.
 */
import type { Security } from './security.js';

const NAMES = { api_key: 'API keys', jwt: 'JWT bearer tokens', oauth: 'OAuth issuer tokens and browser login', mtls: 'client certificates' } as const;

export function authSummary(security: Pick<Security, 'enabled' | 'mechanisms'>, tls: boolean): string {
  const transport = tls ? 'TLS 1.3' : 'plaintext';
  if (!security.enabled) return `authentication off: every caller is anonymous with every permission (${transport})`;
  return `authentication on: ${security.mechanisms.map((m) => NAMES[m]).join(', ')} (${transport})`;
}
