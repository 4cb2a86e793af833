/**
 * The dashboard's files on the HTTP listener (src/api/http/dashboard-routes.ts):
 * the page at / and /dashboard with its security headers and the hash of its
 * import map, every file it references served from this server, the
 * libraries byte for byte from node_modules, and nothing else reaching the disk.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { contentSecurityPolicy } from '../../src/api/http/dashboard-routes.js';
import { call, startGateway, type Gateway } from '../api/http/http-fixtures.js';

const PAGES = ['/', '/dashboard', '/dashboard/', '/dashboard/index.html'];

function importMapOf(page: string): string {
  const found = /<script type="importmap">([^<]*)<\/script>/.exec(page);
  assert.ok(found, 'the page has an import map');
  return found[1] as string;
}

describe('dashboard routes', () => {
  let gw: Gateway;
  before(async () => {
    gw = await startGateway();
  });
  after(() => gw.stop());

  it('serves the page at / and /dashboard, with a CSP that admits only this origin and the import map by its hash', async () => {
    for (const path of PAGES) {
      const page = await call(gw.base, 'GET', path);
      assert.equal(page.status, 200, path);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
      const importMap = importMapOf(page.text);
      const hash = createHash('sha256').update(importMap).digest('base64');
      const csp = page.headers.get('content-security-policy') ?? '';
      assert.equal(csp, contentSecurityPolicy(importMap));
      assert.match(csp, /default-src 'none'/);
      assert.ok(csp.includes(`script-src 'self' 'sha256-${hash}'`), csp);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
      assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(page.headers.get('x-frame-options'), 'DENY');
      assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
      assert.doesNotMatch(page.text, /https?:\/\//, 'no CDN or other remote reference');
      // The import map is the page's only inline script.
      assert.equal([...page.text.matchAll(/<script(?![^>]*\bsrc=)[^>]*>/g)].length, 1);
    }
    const head = await fetch(`${gw.base}/dashboard`, { method: 'HEAD' });
    assert.equal(head.status, 200);
  });

  it('serves every file the page and the import map name, as modules and stylesheets of this origin', async () => {
    const page = (await call(gw.base, 'GET', '/dashboard')).text;
    const imports = Object.values((JSON.parse(importMapOf(page)) as { imports: Record<string, string> }).imports);
    const referenced = [...page.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1] as string);
    for (const path of [...referenced.filter((p) => !p.startsWith('/api/')), ...imports]) {
      const answer = await fetch(gw.base + path);
      assert.equal(answer.status, 200, path);
      const type = answer.headers.get('content-type') ?? '';
      if (path.endsWith('.js') || path.endsWith('.mjs')) assert.match(type, /javascript/, path);
      if (path.endsWith('.css')) assert.match(type, /^text\/css/, path);
      assert.ok(answer.headers.get('content-security-policy'), path);
    }
  });

  it('serves each library from its package, unchanged, with a cache lifetime', async () => {
    const vendor: Array<[string, string]> = [
      ['preact.mjs', 'preact'],
      ['preact-hooks.mjs', 'preact/hooks'],
      ['htm.mjs', 'htm'],
      ['htm-preact.mjs', 'htm/preact'],
      ['uplot.mjs', 'uplot/dist/uPlot.esm.js'],
      ['uplot.css', 'uplot/dist/uPlot.min.css'],
    ];
    for (const [name, specifier] of vendor) {
      const answer = await fetch(`${gw.base}/dashboard/vendor/${name}`);
      assert.equal(answer.status, 200, name);
      assert.ok(Buffer.from(await answer.arrayBuffer()).equals(readFileSync(fileURLToPath(import.meta.resolve(specifier)))), name);
      assert.match(answer.headers.get('cache-control') ?? '', /max-age=\d+/);
    }
  });

  it('serves the dashboard folder own modules as they are on disk', async () => {
    const answer = await fetch(`${gw.base}/dashboard/lib/hub.js`);
    assert.equal(answer.status, 200);
    assert.equal(await answer.text(), readFileSync(new URL('../../dashboard/lib/hub.js', import.meta.url), 'utf8'));
  });

  it('answers NOT_FOUND for anything else under /dashboard, so no path reaches the disk', async () => {
    for (const path of ['/dashboard/index.htm', '/dashboard/missing.js', '/dashboard/..%2Fpackage.json', '/dashboard/../package.json', '/dashboard/lib/../../package.json', '/dashboard/vendor/preact.js', '/dashboard/vendor/../../node_modules/preact/package.json', '/dashboard/lib', '/dashboard/%2e%2e/src/server.ts', '/index.html']) {
      const answer = await call(gw.base, 'GET', path);
      assert.deepEqual([answer.status, answer.body.code], [404, 'NOT_FOUND'], path);
    }
  });

  it('answers other methods on its paths with 405 and Allow: GET, and the API is unchanged around it', async () => {
    for (const path of ['/', '/dashboard', '/dashboard/app.js']) {
      const answer = await call(gw.base, 'POST', path, {});
      assert.deepEqual([answer.status, answer.body.code, answer.body.metadata.reason], [405, 'NOT_FOUND', 'method_not_allowed'], path);
      assert.match(answer.headers.get('allow') ?? '', /\bGET\b/, path);
    }
    assert.equal((await call(gw.base, 'GET', '/api/v1/agents')).status, 200);
    assert.equal((await call(gw.base, 'GET', '/health')).status, 200);
  });
});
