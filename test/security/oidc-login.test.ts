/**
 * The browser login end to end against a real OpenID provider
 * (oidc-provider) on loopback: the test plays the browser, following the
 * redirects and submitting the provider's own login and consent forms,
 * then calls the API with the session cookie and with the tokens it got. A
 * second client's access token from the same issuer is accepted through
 * the issuer's JWKS.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { exportJWK } from 'jose';
import Provider from 'oidc-provider';
import * as client from 'openid-client';
import { ADMIN_KEY, startSecuredServer, type SecuredServer } from './secured-server.js';

const AUDIENCE = 'urn:svc:test';
const ROLES: Readonly<Record<string, string[]>> = { alice: ['operator', 'viewer'], bob: ['viewer'] };

let idp: Server;
let issuer: string;
let s: SecuredServer;

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

before(async () => {
  const [idpPort, apiPort] = [await freePort(), await freePort()];
  issuer = `http://127.0.0.1:${idpPort}`;
  const callback = `http://127.0.0.1:${apiPort}/api/v1/auth/callback`;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const provider = new Provider(issuer, {
    clients: [
      { client_id: 'svc', client_secret: 'svc-client-secret-of-the-test', redirect_uris: [callback], token_endpoint_auth_method: 'client_secret_post' },
      { client_id: 'cli', token_endpoint_auth_method: 'none', redirect_uris: ['http://127.0.0.1/cli-callback'] },
    ],
    jwks: { keys: [{ ...(await exportJWK(rsa)), kid: 'rs', alg: 'RS256', use: 'sig' }, { ...(await exportJWK(ec)), kid: 'es', alg: 'ES256', use: 'sig' }] },
    cookies: { keys: ['cookie-key-of-the-test'] },
    claims: { openid: ['sub'], profile: ['name'] },
    scopes: ['openid', 'offline_access', 'profile'],
    features: {
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => AUDIENCE,
        useGrantedResource: async () => true,
        getResourceServerInfo: async () => ({ scope: 'svc.access', audience: AUDIENCE, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
      },
    },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id, name: id }) }),
    extraTokenClaims: async (_ctx, token) => ({ roles: ROLES[token.accountId ?? ''] ?? [] }),
  });
  idp = createServer(provider.callback());
  await new Promise<void>((resolve) => idp.listen(idpPort, '127.0.0.1', resolve));
  s = await startSecuredServer({
    flags: [`--server.http_addr=127.0.0.1:${apiPort}`],
    env: {
      SVC_SECURITY_OAUTH_ISSUER: issuer,
      SVC_SECURITY_CLIENT_ID: 'svc',
      SVC_SECURITY_CLIENT_SECRET: 'svc-client-secret-of-the-test',
      SVC_SECURITY_REDIRECT_URI: callback,
      SVC_SECURITY_JWT_AUDIENCE: AUDIENCE,
    },
  });
});
after(async () => {
  await s.stop();
  idp.closeAllConnections();
  await new Promise<void>((resolve) => idp.close(() => resolve()));
});

/** A browser, as far as the flow needs one: cookies per origin, redirects followed by hand, forms submitted. */
function browser() {
  const jars = new Map<string, Map<string, string>>();
  const jar = (url: URL) => jars.get(url.origin) ?? jars.set(url.origin, new Map()).get(url.origin)!;
  return {
    cookies: (origin: string) => jars.get(origin) ?? new Map<string, string>(),
    async go(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
      const target = new URL(url);
      const cookie = [...jar(target)].map(([k, v]) => `${k}=${v}`).join('; ');
      const answer = await fetch(target, {
        method: init.method ?? 'GET',
        redirect: 'manual',
        headers: { ...(cookie === '' ? {} : { cookie }), ...(init.form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
        ...(init.form === undefined ? {} : { body: new URLSearchParams(init.form).toString() }),
      });
      for (const line of answer.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const eq = pair.indexOf('=');
        const gone = /expires=Thu, 01 Jan 1970/i.test(line) || /max-age=0/i.test(line);
        if (gone) jar(target).delete(pair.slice(0, eq));
        else jar(target).set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      return answer;
    },
  };
}

/** Follows redirects until one leaves the issuer, submitting its login and consent forms on the way; answers the last Location. */
async function signIn(b: ReturnType<typeof browser>, start: string, account: string): Promise<string> {
  let url = start;
  for (let step = 0; step < 20; step++) {
    if (!url.startsWith(issuer)) return url;
    const answer = await b.go(url);
    if (answer.status >= 300 && answer.status < 400) {
      url = new URL(answer.headers.get('location') ?? '', url).href;
      continue;
    }
    const html = await answer.text();
    assert.equal(answer.status, 200, html.slice(0, 500));
    const action = new URL(/<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? '', url).href;
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    const submitted = await b.go(action, { method: 'POST', form: prompt === 'login' ? { prompt, login: account, password: 'any' } : { prompt: prompt ?? '' } });
    url = new URL(submitted.headers.get('location') ?? '', action).href;
  }
  throw new Error('the login did not end');
}

test('login with PKCE at the issuer, back to the callback: a session cookie (HttpOnly, SameSite=Strict) and a token pair that work', async () => {
  const b = browser();
  const login = await b.go(`${s.base}/api/v1/auth/login`);
  assert.equal(login.status, 302);
  const authorize = new URL(login.headers.get('location') ?? '');
  assert.equal(authorize.origin, issuer);
  assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
  assert.match(authorize.searchParams.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
  assert.ok(authorize.searchParams.get('state') && authorize.searchParams.get('nonce'));
  assert.equal(authorize.searchParams.get('scope'), 'openid profile svc.access');

  const back = await signIn(b, authorize.href, 'alice');
  assert.ok(back.startsWith(`${s.base}/api/v1/auth/callback?`), back);
  const done = await fetch(back, { redirect: 'manual' });
  const pair = (await done.json()) as { access_token: string; refresh_token: string; token_type: string; expires_in: number };
  assert.equal(done.status, 200, JSON.stringify(pair));
  assert.equal(pair.token_type, 'Bearer');
  const cookie = done.headers.getSetCookie().find((c) => c.startsWith('svc_session='));
  assert.ok(cookie, 'the session cookie is set');
  assert.match(cookie, /; httponly/i);
  assert.match(cookie, /; samesite=strict/i);
  assert.doesNotMatch(cookie, /; secure/i, 'not over plain HTTP');

  const session = cookie.split(';')[0] as string;
  assert.equal((await fetch(`${s.base}/api/v1/agents`, { headers: { cookie: session } })).status, 200, 'the session cookie authenticates alice (operator)');
  assert.equal((await fetch(`${s.base}/api/v1/keys`, { headers: { cookie: session } })).status, 403, 'with her roles only');
  assert.equal((await fetch(`${s.base}/api/v1/agents`, { headers: { authorization: `Bearer ${pair.access_token}` } })).status, 200);
  assert.deepEqual((await s.grpc({ token: pair.access_token }).list()).agents, []);
  const refreshed = (await s.grpc().refreshToken(pair.refresh_token)).access_token;
  assert.equal((await s.grpc({ token: refreshed }).list()).next_page_token, '');
  const audit = (await s.grpc({ apiKey: ADMIN_KEY }).listAudit({ event: 'authentication', principal: 'alice' })).records;
  assert.ok(audit.some((r) => r.operation === 'LoginCallback' && r.outcome === 'success'), JSON.stringify(audit));
});

test('the callback returns the browser where the login was asked to, and refuses a state it did not issue', async () => {
  const b = browser();
  const login = await b.go(`${s.base}/api/v1/auth/login?return_to=%2Fapi%2Fv1%2Fhealth`);
  const back = await signIn(b, login.headers.get('location') ?? '', 'bob');
  const done = await fetch(back, { redirect: 'manual' });
  assert.equal(done.status, 303);
  assert.equal(done.headers.get('location'), '/api/v1/health');
  const replayed = await fetch(back, { redirect: 'manual' });
  assert.equal(replayed.status, 401, 'a state is good for one callback');
  assert.equal((await fetch(`${s.base}/api/v1/auth/login?return_to=https%3A%2F%2Fevil.example`)).status, 400, 'never to another site');
  const forged = await fetch(`${s.base}/api/v1/auth/callback?code=abc&state=not-ours`, { redirect: 'manual' });
  assert.equal(forged.status, 401);
  const denied = await fetch(`${s.base}/api/v1/auth/callback?error=access_denied&state=x`, { redirect: 'manual' });
  assert.equal(denied.status, 401);
});

test('an access token of the issuer, got by another client, is accepted through the issuer\'s JWKS with the roles it carries', async () => {
  const config = await client.discovery(new URL(issuer), 'cli', undefined, client.None(), { execute: [client.allowInsecureRequests] });
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: 'http://127.0.0.1/cli-callback',
    scope: 'openid svc.access',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const back = await signIn(browser(), url.href, 'bob');
  const tokens = await client.authorizationCodeGrant(config, new URL(back), { pkceCodeVerifier: verifier, expectedState: state });
  const bearer = { authorization: `Bearer ${tokens.access_token}` };
  assert.equal((await fetch(`${s.base}/api/v1/agents`, { headers: bearer })).status, 200, 'bob is a viewer');
  const denied = await fetch(`${s.base}/api/v1/agents`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: '{}' });
  assert.equal(denied.status, 403);
  assert.equal((await s.grpc({ token: tokens.access_token }).list()).next_page_token, '');
});
