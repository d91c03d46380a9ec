import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { createApp } from '../../src/http/app.js';
import { declaredRoutes } from '../../src/http/openapi/define-route.js';
import { type OpenApiDocument, createOpenApiDocument, openApiOptionsFrom } from '../../src/http/openapi/openapi-document.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';

/**
 * The OpenAPI document the typed client is generated from. It is built from fixed defaults, not
 * from this shell's environment, so the committed client does not change with whoever ran the
 * script. Keys, the rate limit and the timeout are described as on: a client of a configured
 * server must know its 401s, 429s and 503s.
 */
export async function clientApiDocument(): Promise<OpenApiDocument> {
  // The routes' declarations need a context; an in-memory database and a hash embedder are the cheapest.
  const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'off' });
  const ctx = await createAppContext(config, { embedder: createHashEmbedder(64) });
  try {
    const app = createApp(ctx);
    return createOpenApiDocument(declaredRoutes(app), { ...openApiOptionsFrom(ctx), apiKeys: true, rateLimit: true, requestTimeout: true, admission: true });
  } finally {
    await ctx.close();
  }
}
