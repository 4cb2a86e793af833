/**
 * The web dashboard (docs/dashboard.md) on the HTTP listener, at `/` and
 * `/dashboard`: its page and ES modules from the repository's `dashboard/`
 * folder, and Preact, htm and uPlot from node_modules, as the docs routes
 * serve Swagger UI (no CDN, no build step). The browser finds the libraries
 * by their package names through the page's import map, which the
 * Content-Security-Policy admits by its hash: no other inline script runs,
 * and the page reaches nothing but this origin. The page holds no data; the
 * API calls it makes pass the API's own authentication.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'koa';
import type { GatewayState } from './gateway-state.js';

export const DASHBOARD_PATH = '/dashboard';
const VENDOR_PATH = `${DASHBOARD_PATH}/vendor`;
/** Where the page is served; `/` too, so the listener's root shows it. */
export const DASHBOARD_PAGES: readonly string[] = ['/', DASHBOARD_PATH, `${DASHBOARD_PATH}/`, `${DASHBOARD_PATH}/index.html`];

/** The libraries' ES module builds, by the URL name under /dashboard/vendor and the package path Node resolves. */
const VENDOR_FILES: Readonly<Record<string, string>> = {
  'preact.mjs': 'preact',
  'preact-hooks.mjs': 'preact/hooks',
  'htm.mjs': 'htm',
  'htm-preact.mjs': 'htm/preact',
  'uplot.mjs': 'uplot/dist/uPlot.esm.js',
  'uplot.css': 'uplot/dist/uPlot.min.css',
};

/** The bare names the dashboard's modules import, and the vendor file each resolves to. */
const IMPORTS: Readonly<Record<string, string>> = {
  preact: 'preact.mjs',
  'preact/hooks': 'preact-hooks.mjs',
  htm: 'htm.mjs',
  'htm/preact': 'htm-preact.mjs',
  uplot: 'uplot.mjs',
};

/** The files of the dashboard folder that are served; anything else (this list aside) never reaches the disk. */
const SERVED_EXTENSIONS: ReadonlySet<string> = new Set(['.js', '.css', '.svg']);
const IMPORT_MAP_MARKER = '<!-- import map -->';

/** Found by walking up from this file: it runs from `src/api/http/` under tsx and from `dist/src/api/http/` once built. */
function dashboardDir(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dir, 'dashboard');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
  }
  throw new Error(`cannot find dashboard/index.html above ${fileURLToPath(import.meta.url)}`);
}

interface Asset {
  readonly type: string;
  readonly body: Buffer;
  readonly cacheControl: string;
}

interface Assets {
  readonly page: Buffer;
  readonly csp: string;
  readonly files: ReadonlyMap<string, Asset>;
}

function sha256Base64(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64');
}

/** `connect-src 'self'` covers the WebSocket streams of the same origin (CSP Level 3). */
export function contentSecurityPolicy(importMap: string): string {
  return [
    "default-src 'none'",
    `script-src 'self' 'sha256-${sha256Base64(importMap)}'`,
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function ownFiles(dir: string, under: string = dir): string[] {
  return readdirSync(under, { withFileTypes: true }).flatMap((entry) => {
    const path = join(under, entry.name);
    if (entry.isDirectory()) return ownFiles(dir, path);
    return entry.isFile() && SERVED_EXTENSIONS.has(extname(entry.name)) ? [relative(dir, path).split(sep).join('/')] : [];
  });
}

function loadAssets(): Assets {
  const dir = dashboardDir();
  const files = new Map<string, Asset>();
  for (const file of ownFiles(dir)) files.set(`${DASHBOARD_PATH}/${file}`, { type: extname(file), body: readFileSync(join(dir, file)), cacheControl: 'no-cache' });
  for (const [name, specifier] of Object.entries(VENDOR_FILES)) {
    // The `import` condition of each package's exports: its ES module build.
    const path = fileURLToPath(import.meta.resolve(specifier));
    files.set(`${VENDOR_PATH}/${name}`, { type: extname(name), body: readFileSync(path), cacheControl: 'public, max-age=3600' });
  }
  const importMap = JSON.stringify({ imports: Object.fromEntries(Object.entries(IMPORTS).map(([name, file]) => [name, `${VENDOR_PATH}/${file}`])) });
  const template = readFileSync(join(dir, 'index.html'), 'utf8');
  if (!template.includes(IMPORT_MAP_MARKER)) throw new Error(`dashboard/index.html lacks the marker ${IMPORT_MAP_MARKER}`);
  const page = Buffer.from(template.replace(IMPORT_MAP_MARKER, `<script type="importmap">${importMap}</script>`), 'utf8');
  return { page, csp: contentSecurityPolicy(importMap), files };
}

let loaded: Assets | undefined;
/** Read once per process, at the first request: a server that nobody browses never reads them. */
function assets(): Assets {
  loaded ??= loadAssets();
  return loaded;
}

/** The methods the dashboard answers on `path` (for the no-route answer's `Allow`). */
export function dashboardAllowed(path: string): string[] {
  return DASHBOARD_PAGES.includes(path) || (path.startsWith(`${DASHBOARD_PATH}/`) && assets().files.has(path)) ? ['GET'] : [];
}

export function dashboardMiddleware(): Middleware<GatewayState> {
  return (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const isPage = DASHBOARD_PAGES.includes(ctx.path);
    if (!isPage && !ctx.path.startsWith(`${DASHBOARD_PATH}/`)) return next();
    const { page, csp, files } = assets();
    const file = isPage ? undefined : files.get(ctx.path);
    if (!isPage && file === undefined) return next();
    ctx.set({
      'Content-Security-Policy': csp,
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'no-referrer',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Resource-Policy': 'same-origin',
      'Cache-Control': file?.cacheControl ?? 'no-cache',
    });
    ctx.type = file?.type ?? 'text/html; charset=utf-8';
    ctx.body = file?.body ?? page;
    return undefined;
  };
}
