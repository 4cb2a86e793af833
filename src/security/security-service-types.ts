/**
 * The use cases of the security endpoints (DESIGN.md section 9), which both
 * doors call as they call `AgentService`: tokens, the browser login, keys,
 * audit, configuration and lockdown. Inputs are the transcoded requests
 * (snake_case); outputs are the proto messages' JSON shapes.
 */
import type { SecuredCall } from './gate.js';
import type { TokenPair } from './token-service.js';

export interface LoginStarted {
  authorization_url: string;
}

/** A login completed: the token pair, and the session cookie the REST door sets. */
export interface LoginDone extends TokenPair {
  session: { token: string; maxAgeSeconds: number };
  /** The same-origin path the browser asked to return to, or ''. */
  return_to: string;
}

export interface IssuedKey {
  key_id: string;
  api_key: string;
  name: string;
  roles: string[];
  created_at: string;
  expires_at: string;
  grace_until: string;
}

export interface ApiKeyInfo {
  key_id: string;
  name: string;
  roles: string[];
  /** active, expired, or revoked. */
  state: string;
  created_at: string;
  expires_at: string;
  rotated_at: string;
  grace_until: string;
  revoked_at: string;
  rate_limit_per_hour: number;
}

export interface AuditRecordJson {
  time: string;
  event: string;
  outcome: string;
  principal: string;
  roles: string[];
  source_ip: string;
  user_agent: string;
  operation: string;
  resource: string;
  trace_id: string;
  reason: string;
}

export interface SecurityService {
  createToken(input: Record<string, unknown>, call: SecuredCall): Promise<TokenPair>;
  refreshToken(input: Record<string, unknown>, call: SecuredCall): Promise<TokenPair>;
  login(input: Record<string, unknown>, call: SecuredCall): Promise<LoginStarted>;
  loginCallback(input: Record<string, unknown>, call: SecuredCall): Promise<LoginDone>;
  createKey(input: Record<string, unknown>, call: SecuredCall): Promise<IssuedKey>;
  listKeys(call: SecuredCall): Promise<{ keys: ApiKeyInfo[] }>;
  revokeKey(input: Record<string, unknown>, call: SecuredCall): Promise<ApiKeyInfo>;
  rotateKey(input: Record<string, unknown>, call: SecuredCall): Promise<IssuedKey>;
  listAudit(input: Record<string, unknown>, call: SecuredCall): Promise<{ records: AuditRecordJson[] }>;
  systemConfig(call: SecuredCall): Promise<{ settings: Record<string, string>; lockdown: boolean }>;
  setLockdown(input: Record<string, unknown>, call: SecuredCall): Promise<{ enabled: boolean }>;
}
