/**
 * The part of oidc-provider (a test-only dependency that ships no types) the
 * OIDC end-to-end test uses: a provider built from a configuration, served
 * through its request handler.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }

  export interface ProviderConfiguration {
    clients: Array<Record<string, unknown>>;
    jwks: { keys: Array<Record<string, unknown>> };
    cookies: { keys: string[] };
    claims?: Record<string, string[]>;
    scopes?: string[];
    features?: Record<string, unknown>;
    pkce?: { required: () => boolean };
    findAccount(ctx: unknown, id: string): Promise<Account>;
    extraTokenClaims?(ctx: unknown, token: { accountId?: string }): Promise<Record<string, unknown> | undefined>;
    ttl?: Record<string, number>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: ProviderConfiguration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    proxy: boolean;
  }
}
