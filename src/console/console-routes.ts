import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { bundleConsoleScript } from './console-bundle.js';
import { consolePage } from './console-page.js';

const STYLESHEET = fileURLToPath(new URL('./browser/console.css', import.meta.url));

/** `load` run on first call and its result kept; a failure is not kept, so the next call tries again. */
function loadOnce(load: () => Promise<string>): () => Promise<string> {
  let loading: Promise<string> | undefined;
  return () => {
    if (!loading) {
      loading = load();
      loading.catch(() => (loading = undefined));
    }
    return loading;
  };
}

/**
 * `/console` (the page), its script and style sheet, and `server.json`. Outside `/v1`, so they load without a
 * key: the page signs in with one and sends it on each API call. Not in the OpenAPI document,
 * which describes the API, not pages built on it.
 */
export interface ConsoleOptions {
  /** Whether /v1 wants a key now (keys created while the server runs turn it on). */
  apiKeysRequired: () => Promise<boolean>;
}

export function createConsoleRoutes(options: ConsoleOptions): Hono {
  // On first request: most servers never serve the console, and bundling takes a few hundred ms.
  const script = loadOnce(bundleConsoleScript);
  const stylesheet = loadOnce(() => readFile(STYLESHEET, 'utf8'));
  // Revalidated on each load rather than cached: they change whenever the server's code does.
  const noCache = { 'Cache-Control': 'no-cache' };

  const routes = new Hono();
  routes.get('/', (c) => c.html(consolePage));
  routes.get('/console.js', async (c) => c.body(await script(), 200, { ...noCache, 'Content-Type': 'text/javascript; charset=utf-8' }));
  routes.get('/console.css', async (c) => c.body(await stylesheet(), 200, { ...noCache, 'Content-Type': 'text/css; charset=utf-8' }));
  // Whether to ask for a key: a keyless loopback server opens directly, and a keyed one asks
  // before any API call rather than after a 401. /openapi.json says as much, but only as the
  // server stood when it was first served.
  routes.get('/server.json', async (c) => c.json({ apiKeys: await options.apiKeysRequired() }, 200, noCache));
  return routes;
}
