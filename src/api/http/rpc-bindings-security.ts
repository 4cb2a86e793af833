/**
 * The REST bindings of the security endpoints (DESIGN.md section 9): each
 * calls `SecurityService` with the call the security middleware built. The
 * browser login answers with redirects and the session cookie.
 */
import { SvcError } from '../../errors/svc-error.js';
import { SESSION_COOKIE } from '../../security/credentials.js';
import type { SecuredCall } from '../../security/gate.js';
import type { SecurityService } from '../../security/security-service-types.js';
import type { RpcBinding, RpcCall } from './rpc-bindings.js';

function parts(call: RpcCall): { security: SecurityService; secured: SecuredCall } {
  if (call.security === undefined || call.secured === undefined) {
    throw new SvcError('UNAVAILABLE', 'this listener was built without the security service', { reason: 'security_unavailable' });
  }
  return { security: call.security, secured: call.secured };
}

function bind(status: number, run: (security: SecurityService, call: RpcCall, secured: SecuredCall) => Promise<unknown>): RpcBinding {
  return {
    status,
    invoke: (call) => {
      const { security, secured } = parts(call);
      return run(security, call, secured);
    },
  };
}

export const SECURITY_RPC_BINDINGS: Readonly<Record<string, RpcBinding>> = {
  CreateToken: bind(200, (s, { request }, secured) => s.createToken(request, secured)),
  RefreshToken: bind(200, (s, { request }, secured) => s.refreshToken(request, secured)),
  Login: bind(302, async (s, { request, http }, secured) => {
    const started = await s.login(request, secured);
    http.redirect(302, started.authorization_url);
    return started;
  }),
  LoginCallback: bind(200, async (s, { request, http }, secured) => {
    const { session, return_to: returnTo, ...pair } = await s.loginCallback(request, secured);
    http.setCookie(SESSION_COOKIE, session.token, session.maxAgeSeconds);
    if (returnTo !== '') http.redirect(303, returnTo);
    return pair;
  }),
  CreateKey: bind(201, (s, { request }, secured) => s.createKey(request, secured)),
  ListKeys: bind(200, (s, _call, secured) => s.listKeys(secured)),
  RevokeKey: bind(200, (s, { request }, secured) => s.revokeKey(request, secured)),
  RotateKey: bind(200, (s, { request }, secured) => s.rotateKey(request, secured)),
  ListAudit: bind(200, (s, { request }, secured) => s.listAudit(request, secured)),
  GetSystemConfig: bind(200, (s, _call, secured) => s.systemConfig(secured)),
  SetLockdown: bind(200, (s, { request }, secured) => s.setLockdown(request, secured)),
};
