import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { createConsoleAssets } from '../../console/console-assets.js';
import { CONSOLE_CSP } from '../../console/console-csp.js';
import { consolePage } from '../../console/console-page.js';
import { trailingSlashRedirect } from '../middleware/trailing-slash-redirect.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { jsonReply } from '../openapi/route-responses.js';
import { consoleServerReplySchema } from '../../api/schemas/console-schemas.js';

// Revalidated on each load rather than cached: the assets change whenever the server's code does.
const NO_CACHE = { 'Cache-Control': 'no-cache' };

/**
 * `/console` (the web console), its script and style sheet, and `server.json`. Outside `/v1`,
 * like `/docs`: they load without a key; the page signs in with one and sends it on each API call.
 */
export function createConsoleRoutes(ctx: AppContext): ApiRoutes {
  const assets = createConsoleAssets();
  const routes = createApiRoutes();
  const text = (type: string) => ({ [type]: { schema: z.string() } });

  const pageRoute = createRoute({
    method: 'get',
    path: '/console',
    operationId: 'console',
    tags: [TAGS.console],
    summary: 'The web console: memories, documents, search, chat and agents',
    responses: { 200: { description: 'An HTML page; its script renders the rest.', content: text('text/html') } },
  });
  defineRoute(routes, pageRoute, (c) => c.html(consolePage));
  // Not a route of the document: the same page, spelled with a slash.
  routes.use('/console/', trailingSlashRedirect());

  const scriptRoute = createRoute({
    method: 'get',
    path: '/console/console.js',
    operationId: 'consoleScript',
    tags: [TAGS.console],
    summary: "The console's script (its TypeScript and packages, bundled by the server)",
    responses: { 200: { description: 'An ES module.', content: text('text/javascript') } },
  });
  defineRoute(routes, scriptRoute, async (c) => c.body(await assets.script(), 200, { ...NO_CACHE, 'Content-Type': 'text/javascript; charset=utf-8' }));

  const stylesheetRoute = createRoute({
    method: 'get',
    path: '/console/console.css',
    operationId: 'consoleStylesheet',
    tags: [TAGS.console],
    summary: "The console's style sheet",
    responses: { 200: { description: 'A style sheet.', content: text('text/css') } },
  });
  defineRoute(routes, stylesheetRoute, async (c) => c.body(await assets.stylesheet(), 200, { ...NO_CACHE, 'Content-Type': 'text/css; charset=utf-8' }));

  const serverRoute = createRoute({
    method: 'get',
    path: '/console/server.json',
    operationId: 'consoleServer',
    tags: [TAGS.console],
    summary: 'Whether the console must ask for an API key',
    description:
      'A keyless loopback server opens directly; a keyed one asks for the key before any call fails. `/openapi.json` tells as much, ' +
      'but only as the server stood when it was first served: keys created later turn authentication on.',
    responses: { 200: jsonReply('Whether `/v1` wants a key.', consoleServerReplySchema) },
  });
  defineRoute(routes, serverRoute, async (c) => c.json({ apiKeys: await ctx.auth.isRequired() }, 200, NO_CACHE));

  return routes;
}

/**
 * The console's CSP, replacing the API's (which allows nothing). Registered before the app's
 * secure-headers middleware, so that it runs after it: that one sets headers on the way out.
 */
export const consoleContentSecurityPolicy: MiddlewareHandler = async (c, next) => {
  await next();
  c.res.headers.set('Content-Security-Policy', CONSOLE_CSP);
};
