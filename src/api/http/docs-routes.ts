/**
 * The API's documentation, served offline from the HTTP listener: the OpenAPI
 * document at /api/v1/openapi.json and Swagger UI at /api/v1/docs, its files
 * read from the swagger-ui-dist package (no CDN). Our own page and
 * initializer replace the package's, which point at the petstore example.
 */
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import Router from '@koa/router';
import type { GatewayState } from './gateway-state.js';

export const API_PREFIX = '/api/v1';
export const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;
export const DOCS_PATH = `${API_PREFIX}/docs`;

// absolute-path.js alone: the package's main module would load the 1.7 MB browser bundle into the server.
const getAbsoluteFSPath = createRequire(import.meta.url)('swagger-ui-dist/absolute-path.js') as () => string;

/** The package files the page uses; anything else under /docs is NOT_FOUND, so no path reaches the disk. */
const ASSETS: ReadonlySet<string> = new Set(['swagger-ui.css', 'index.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png', 'favicon-16x16.png']);

const INDEX_HTML = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>svc API</title>
    <link rel="stylesheet" type="text/css" href="${DOCS_PATH}/swagger-ui.css">
    <link rel="stylesheet" type="text/css" href="${DOCS_PATH}/index.css">
    <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png" sizes="32x32">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${DOCS_PATH}/swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="${DOCS_PATH}/swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script src="${DOCS_PATH}/swagger-initializer.js" charset="UTF-8"></script>
  </body>
</html>
`;

// A file rather than an inline script, so a Content-Security-Policy without 'unsafe-inline' can serve the page.
const INITIALIZER_JS = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(OPENAPI_PATH)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
};
`;

/** The methods the docs answer on `path` (for the no-route answer's `Allow`). */
export function docsAllowed(path: string): string[] {
  const file = path.startsWith(`${DOCS_PATH}/`) ? path.slice(DOCS_PATH.length + 1) : undefined;
  const served = path === OPENAPI_PATH || path === DOCS_PATH || file === '' || file === 'index.html' || file === 'swagger-initializer.js' || (file !== undefined && ASSETS.has(file));
  return served ? ['GET'] : [];
}

export function createDocsRouter(openApiDocument: unknown): Router<GatewayState> {
  const openApiJson = JSON.stringify(openApiDocument);
  const dir = getAbsoluteFSPath();
  const router = new Router<GatewayState>();
  router.get(OPENAPI_PATH, (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApiJson;
  });
  router.get([DOCS_PATH, `${DOCS_PATH}/`, `${DOCS_PATH}/index.html`], (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = INDEX_HTML;
  });
  router.get(`${DOCS_PATH}/swagger-initializer.js`, (ctx) => {
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.body = INITIALIZER_JS;
  });
  router.get(`${DOCS_PATH}/:file`, (ctx, next) => {
    const file = ctx.params.file ?? '';
    if (!ASSETS.has(file)) return next();
    ctx.type = extname(file);
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = createReadStream(join(dir, file));
    return undefined;
  });
  return router;
}
