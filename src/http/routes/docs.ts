import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import type { OpenApiDocument } from '../openapi/openapi-document.js';
import { trailingSlashRedirect } from '../middleware/trailing-slash-redirect.js';
import { header, json } from '../openapi/route-responses.js';
import { type DocsAsset, docsAssetParams } from '../../api/schemas/docs-schemas.js';
import { parseWith } from '../validate.js';

/**
 * Swagger UI is served from the `swagger-ui-dist` package, not a CDN: the page works offline
 * and runs no third-party script on the API's origin, so its CSP can allow `'self'` only.
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI sets style attributes as it renders.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  // The document, and the requests of "Try it out".
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** Where `GET /` sends a browser: the console, which links to nothing it cannot reach without a key. */
const HOME_PAGE = 'console';

// Relative URLs, so the page also works behind a proxy that serves the API under a path prefix.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>memrag API</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/swagger-init.js"></script>
</body>
</html>
`;

// A file rather than an inline script, which the CSP would have to allow.
const INIT_SCRIPT = `window.onload = function () {
  window.ui = SwaggerUIBundle({ url: 'openapi.json', dom_id: '#swagger-ui', deepLinking: true, presets: [SwaggerUIBundle.presets.apis] });
};
`;

const ASSETS: Record<DocsAsset, { file?: string; text?: string; type: string }> = {
  'swagger-ui.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
  'swagger-init.js': { text: INIT_SCRIPT, type: 'text/javascript; charset=utf-8' },
};

/**
 * `/openapi.json` (the document), `/docs` (Swagger UI over it) and `/`, which sends a browser to
 * `/docs`. Outside `/v1`, like the probes: describing the API gives nothing away that a key protects.
 */
export function createDocsRoutes(buildDocument: () => OpenApiDocument): ApiRoutes {
  // Built on first request: it takes a tenth of a second or more, which every app (and test) would pay at creation.
  let documentJson: string | undefined;
  const distDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  // Read on first use: most servers never serve the page, and the bundle is 1.7 MB.
  const files = new Map<string, Promise<Uint8Array<ArrayBuffer>>>();
  const routes = createApiRoutes();

  // The first page a person should see; a browser that opens the server's address lands there, not on a JSON 404.
  const homeRoute = createRoute({
    method: 'get',
    path: '/',
    operationId: 'home',
    tags: [TAGS.documentation],
    summary: 'Sends a browser to the first page to see: the console (`/console`)',
    responses: { 302: { description: 'To `/console`.', headers: z.object({ Location: header('`console`, relative to this address: `/console`.') }) } },
  });
  // Relative, like the page's own URLs, so it also works behind a proxy that serves the API under a path prefix.
  defineRoute(routes, homeRoute, (c) => c.redirect(HOME_PAGE, 302));

  const openApiDocumentRoute = createRoute({
    method: 'get',
    path: '/openapi.json',
    operationId: 'openApiDocument',
    tags: [TAGS.documentation],
    summary: 'This OpenAPI 3.1 document',
    responses: { 200: { description: 'The document.', content: json(z.record(z.string(), z.unknown())) } },
  });
  defineRoute(routes, openApiDocumentRoute, (c) => {
    documentJson ??= JSON.stringify(buildDocument());
    return c.body(documentJson, 200, { 'Content-Type': 'application/json; charset=utf-8' });
  });

  const docsRoute = createRoute({
    method: 'get',
    path: '/docs',
    operationId: 'docs',
    tags: [TAGS.documentation],
    summary: 'Interactive documentation (Swagger UI) of this document',
    responses: { 200: { description: 'An HTML page.', content: { 'text/html': { schema: z.string() } } } },
  });
  defineRoute(routes, docsRoute, (c) => c.html(PAGE));
  // Not a route of the document: the same page, spelled with a slash.
  routes.use('/docs/', trailingSlashRedirect());

  const docsAssetRoute = createRoute({
    method: 'get',
    path: '/docs/{asset}',
    operationId: 'docsAsset',
    tags: [TAGS.documentation],
    summary: "A script or style sheet of the documentation page (Swagger UI's, from the swagger-ui-dist package)",
    request: { params: docsAssetParams },
    responses: { 200: { description: 'The file.', content: { 'text/css': { schema: z.string() }, 'text/javascript': { schema: z.string() } } } },
  });
  defineRoute(routes, docsAssetRoute, async (c) => {
    const asset = ASSETS[parseWith(docsAssetParams, { asset: c.req.param('asset') }, 'path').asset];
    c.header('Content-Type', asset.type);
    c.header('Cache-Control', 'public, max-age=3600');
    if (asset.text !== undefined) return c.body(asset.text);
    const file = asset.file!;
    if (!files.has(file)) {
      const reading = readFile(join(distDir, file)).then((bytes) => new Uint8Array(bytes));
      // A failed read is not cached: the next request tries again.
      reading.catch(() => files.delete(file));
      files.set(file, reading);
    }
    return c.body(await files.get(file)!);
  });

  return routes;
}

/**
 * The page's CSP, replacing the API's (which allows nothing). Registered before the app's
 * secure-headers middleware, so that it runs after it: that one overwrites headers on the way out.
 */
export const docsContentSecurityPolicy: MiddlewareHandler = async (c, next) => {
  await next();
  c.res.headers.set('Content-Security-Policy', DOCS_CSP);
};
