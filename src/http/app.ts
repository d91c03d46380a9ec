import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppContext } from '../app-context.js';
import { tenantMaxConcurrent } from '../config/config.js';
import type { ApiEnv } from './api-env.js';
import { errorReplyForResponse } from '../api/error-mapping.js';
import { errorBody, payloadTooLarge } from '../api/errors.js';
import { apiKeyAuth } from './middleware/api-key-auth.js';
import { apiSecureHeaders, corsFor } from './middleware/browser-policies.js';
import { closeOnUnreadBody } from './middleware/close-on-unread-body.js';
import { httpMetrics } from './middleware/http-metrics.js';
import { concurrencyLimit } from './middleware/concurrency-limit.js';
import { tenantAdmission } from './middleware/tenant-admission.js';
import { rateLimit } from './middleware/rate-limit.js';
import { requestLogging } from './middleware/request-logging.js';
import { requestTimeout } from './middleware/request-timeout.js';
import { requireRouteScope } from './middleware/require-scope.js';
import { tracing } from './middleware/tracing.js';
import { type ApiApp, createApiApp, declaredRoutes } from './openapi/define-route.js';
import { createOpenApiDocument, openApiOptionsFrom } from './openapi/openapi-document.js';
import { createBlockRoutes } from './routes/blocks.js';
import { createAgentRoutes } from './routes/agents.js';
import { createWorkflowRoutes } from './routes/workflows.js';
import { createChatRoutes } from './routes/chat.js';
import { consoleContentSecurityPolicy, createConsoleRoutes } from './routes/console.js';
import { createConversationRoutes } from './routes/conversations.js';
import { createDocsRoutes, docsContentSecurityPolicy } from './routes/docs.js';
import { createDocumentRoutes } from './routes/documents.js';
import { createJobRoutes } from './routes/jobs.js';
import { createAuditRoutes } from './routes/audit.js';
import { createKeyRoutes } from './routes/keys.js';
import { createUserRoutes } from './routes/users.js';
import { createRunRoutes } from './routes/runs.js';
import { createProviderRoutes } from './routes/providers.js';
import { createSearchRoutes } from './routes/search.js';
import { createMemoryRoutes } from './routes/memories.js';
import { createMcpRoutes } from './routes/mcp.js';
import { createMemoryExtractionRoutes } from './routes/memory-extraction.js';
import { createOperationsRoutes } from './routes/operations.js';
import { createOpenAiCompatibleRoutes } from './routes/openai-compatible.js';
import { OPENAI_COMPATIBLE_PATHS, openAiErrorShape } from './openai-compatible/openai-error.js';
import { createPortabilityRoutes } from './routes/portability.js';
import { createTagRoutes } from './routes/tags.js';
import { createTurnRoutes } from './routes/turns.js';

/**
 * The HTTP API over an application context. Every reply, errors included, is JSON. Its OpenAPI
 * document (`/openapi.json`) is generated from the declarations of the routes mounted here.
 */
export function createApp(ctx: AppContext): ApiApp {
  const app = createApiApp();
  const maxBytes = ctx.config.MAX_BODY_BYTES;
  const maxUploadBytes = ctx.config.MAX_UPLOAD_BYTES;

  // Outermost, so that every reply (413s, 429s, preflights, errors) is traced, logged, measured and
  // secured; the request's span first, so that the request id logged is its trace id.
  app.use(tracing);
  app.use(requestLogging(ctx.logger));
  // Any reply, early refusals above all, that leaves part of a body on the connection closes it.
  app.use(closeOnUnreadBody);
  app.use(httpMetrics);
  // Before the secure headers, so that it runs after them: the docs page loads scripts their CSP forbids.
  app.use('/docs/*', docsContentSecurityPolicy);
  app.use('/console/*', consoleContentSecurityPolicy);
  app.use(apiSecureHeaders());
  const cors = corsFor(ctx.config.CORS_ORIGINS);
  if (cors) app.use(cors);

  // Outside every check below, so that their refusals reach OpenAI clients in OpenAI's error shape too.
  for (const path of OPENAI_COMPATIBLE_PATHS) app.use(path, openAiErrorShape);

  // Checked on the declared length, and counted while reading when there is none (chunked).
  const limitTo = (size: number) =>
    bodyLimit({
      maxSize: size,
      onError: () => {
        throw payloadTooLarge(size);
      },
    });
  const bodies = limitTo(maxBytes);
  const uploads = limitTo(maxUploadBytes);
  // Documents and imports are files, not requests: they get the upload limit, and so do the
  // requests that may carry images (chat messages, tool outputs; each image is held to IMAGE_MAX_BYTES).
  const uploadPath = /^\/v1\/(documents|conversations\/import|import|chat|chat\/completions|runs\/[^/]+\/tool-outputs)\/?$/;
  app.use((c, next) => (c.req.method === 'POST' && uploadPath.test(c.req.path) ? uploads : bodies)(c, next));

  app.route('/', createOperationsRoutes(ctx));
  // Built on first request, once every route below is declared.
  app.route(
    '/',
    createDocsRoutes(() => createOpenApiDocument(declaredRoutes(app), openApiOptionsFrom(ctx))),
  );
  const { RATE_LIMIT_PER_MINUTE, RATE_LIMIT_BURST, REQUEST_TIMEOUT_MS } = ctx.config;
  // The MCP endpoint reaches the same stores as /v1, so it sits behind the same budget and keys.
  const apiPaths = ['/v1/*', '/mcp'];
  if (RATE_LIMIT_PER_MINUTE > 0) {
    // Before the key check: see rateLimit. Without keys in use there is no key to budget by, so
    // whatever a client sends is not looked up.
    const identifyKey = async (key: string) => ((await ctx.auth.isRequired()) ? (await ctx.auth.authenticate(key))?.keyId : undefined);
    const limit = rateLimit({ perMinute: RATE_LIMIT_PER_MINUTE, burst: RATE_LIMIT_BURST, identifyKey, trustProxy: ctx.config.TRUST_PROXY });
    for (const path of apiPaths) app.use(path, limit);
  }
  // A request that would wait past its own timeout is answered at once instead.
  const queueTimeoutMs = REQUEST_TIMEOUT_MS > 0 ? Math.min(ctx.config.QUEUE_TIMEOUT_MS, REQUEST_TIMEOUT_MS) : ctx.config.QUEUE_TIMEOUT_MS;
  // A run's or a job's event stream lasts as long as its client listens: it would hold a slot for
  // nothing. Only those: any other path ending in /events (a memory's key) is a request like others.
  const isEventStream = (c: Context) => c.req.method === 'GET' && /^\/v1\/(runs|jobs)\/[^/]+\/events$/.test(c.req.path);
  const admitted =
    (gate: MiddlewareHandler<ApiEnv>): MiddlewareHandler<ApiEnv> =>
    (c, next) =>
      isEventStream(c) ? next() : gate(c, next);
  // A tenant at its share must still be able to look at its runs and stop a runaway one.
  const isRunControl = (c: Context) =>
    (c.req.method === 'GET' && /^\/v1\/runs\/[^/]+$/.test(c.req.path)) || (c.req.method === 'POST' && /^\/v1\/runs\/[^/]+\/cancel$/.test(c.req.path));
  if (ctx.config.MAX_CONCURRENT_REQUESTS > 0) {
    // Before the key check, so that requests without a valid key are bounded too.
    const admission = admitted(
      concurrencyLimit({ maxInFlight: ctx.config.MAX_CONCURRENT_REQUESTS, maxQueued: ctx.config.MAX_QUEUED_REQUESTS, queueTimeoutMs }),
    );
    for (const path of apiPaths) app.use(path, admission);
  }
  if (REQUEST_TIMEOUT_MS > 0) {
    const timeout = requestTimeout(REQUEST_TIMEOUT_MS);
    // The chat bounds its own turns (see requestTimeout); its SSE streams must never be cut here,
    // nor those of a resumed run or of its events. Not /mcp: which tool a request calls is in its
    // body, so the MCP tools bound themselves (see mcp/tool-deadline.ts).
    app.use('/v1/*', (c, next) => (/^\/v1\/(chat|runs)(\/|$)|^\/v1\/jobs\/[^/]+\/events$/.test(c.req.path) ? next() : timeout(c, next)));
  }
  // Always on: it also gives keyless servers their tenant (`default`), which every route needs.
  const keyAuth = apiKeyAuth(ctx.auth);
  for (const path of apiPaths) app.use(path, keyAuth);
  // /mcp checks each tool call's scope itself (routes/mcp.ts): which tool is called is in the body.
  app.use('/v1/*', requireRouteScope());
  const maxPerTenant = tenantMaxConcurrent(ctx.config);
  if (maxPerTenant > 0) {
    // Behind the key check, which names the tenant: see tenantAdmission.
    const share = admitted(tenantAdmission({ maxPerTenant, maxQueued: ctx.config.MAX_QUEUED_REQUESTS, queueTimeoutMs }));
    const shareUnlessRunControl: MiddlewareHandler<ApiEnv> = (c, next) => (isRunControl(c) ? next() : share(c, next));
    for (const path of apiPaths) app.use(path, shareUnlessRunControl);
  }
  app.route('/v1/memories', createMemoryExtractionRoutes(ctx));
  app.route('/v1/memories', createMemoryRoutes(ctx));
  app.route('/v1/tags', createTagRoutes(ctx));
  app.route('/v1/chat', createChatRoutes(ctx));
  app.route('/v1/conversations', createConversationRoutes(ctx));
  app.route('/v1/runs', createRunRoutes(ctx));
  app.route('/v1/turns', createTurnRoutes(ctx));
  app.route('/v1/agents', createAgentRoutes(ctx));
  app.route('/v1/workflows', createWorkflowRoutes(ctx));
  app.route('/v1/blocks', createBlockRoutes(ctx));
  app.route('/v1/providers', createProviderRoutes(ctx));
  app.route('/v1/documents', createDocumentRoutes(ctx));
  app.route('/v1/search', createSearchRoutes(ctx));
  app.route('/v1/jobs', createJobRoutes(ctx));
  app.route('/v1/users', createUserRoutes(ctx));
  app.route('/v1/audit', createAuditRoutes(ctx));
  app.route('/v1', createPortabilityRoutes(ctx));
  app.route('/v1', createOpenAiCompatibleRoutes(ctx));
  app.route('/mcp', createMcpRoutes(ctx));
  // Last of the API: on a server without keys the first key created turns them on, so whatever walks
  // the routes in order (the route fuzzer) reaches every other one before it.
  app.route('/v1/keys', createKeyRoutes(ctx));
  app.route('/', createConsoleRoutes(ctx));

  app.notFound((c) => c.json(errorBody('not_found', `No route for ${c.req.method} ${c.req.path}`), 404));

  app.onError(async (err, c) => {
    const { status, body, retryAfterSeconds } = await errorReplyForResponse(err);
    if (body.error.code === 'database_unavailable') ctx.logger.warn({ err }, `${c.req.method} ${c.req.path}: database unavailable`);
    else if (status === 500) ctx.logger.error({ err }, `${c.req.method} ${c.req.path} failed`);
    if (retryAfterSeconds !== undefined) c.header('Retry-After', String(retryAfterSeconds));
    // 499 (client closed request) is not in hono's status type; nobody reads that reply anyway.
    return c.json(body, status as ContentfulStatusCode);
  });

  return app;
}
