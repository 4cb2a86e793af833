/**
 * The security endpoints over gRPC (DESIGN.md section 9): each calls
 * `SecurityService` with the call the security interceptors built.
 * grpc-handlers.ts wraps them like every unary handler (deadline, errors).
 */
import type { SecuredCall } from '../../security/gate.js';
import type { SecurityService } from '../../security/security-service-types.js';

type Request = Record<string, unknown>;

export type SecurityMethod = (service: SecurityService, request: Request, call: SecuredCall) => Promise<unknown>;

export const SECURITY_METHODS: Readonly<Record<string, SecurityMethod>> = {
  CreateToken: (s, request, call) => s.createToken(request, call),
  RefreshToken: (s, request, call) => s.refreshToken(request, call),
  Login: (s, request, call) => s.login(request, call),
  LoginCallback: async (s, request, call) => {
    // The session cookie is the browser's; over gRPC the token pair is the answer.
    const { session: _session, return_to: _returnTo, ...pair } = await s.loginCallback(request, call);
    return pair;
  },
  CreateKey: (s, request, call) => s.createKey(request, call),
  ListKeys: (s, _request, call) => s.listKeys(call),
  RevokeKey: (s, request, call) => s.revokeKey(request, call),
  RotateKey: (s, request, call) => s.rotateKey(request, call),
  ListAudit: (s, request, call) => s.listAudit(request, call),
  GetSystemConfig: (s, _request, call) => s.systemConfig(call),
  SetLockdown: (s, request, call) => s.setLockdown(request, call),
};
