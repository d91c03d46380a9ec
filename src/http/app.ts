import { Hono } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { AppContext } from '../app-context.js';
import { InvalidCursorError } from '../memory/cursor.js';
import { DocumentParseError } from '../knowledge/parsers/document-parse-error.js';
import { type ErrorCode, HttpError, errorBody, payloadTooLarge } from './errors.js';
import { createChatRoutes } from './routes/chat.js';
import { createDocumentRoutes } from './routes/documents.js';
import { createSearchRoutes } from './routes/search.js';
import { createMemoryRoutes } from './routes/memories.js';
import { createTagRoutes } from './routes/tags.js';

/** The HTTP API over an application context. Every reply, errors included, is JSON. */
export function createApp(ctx: AppContext): Hono {
  const app = new Hono();
  const maxBytes = ctx.config.MAX_BODY_BYTES;
  const maxUploadBytes = ctx.config.MAX_UPLOAD_BYTES;

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
  app.use((c, next) => (c.req.method === 'POST' && /^\/v1\/documents\/?$/.test(c.req.path) ? uploads : bodies)(c, next));

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  if (ctx.config.API_KEYS.length > 0) {
    app.use(
      '/v1/*',
      bearerAuth({
        token: ctx.config.API_KEYS,
        noAuthenticationHeader: { message: 'An API key is required: Authorization: Bearer <key>' },
        invalidAuthenticationHeader: { message: 'The Authorization header must be: Bearer <key>' },
        invalidToken: { message: 'The API key is not valid' },
      }),
    );
  }
  app.route('/v1/memories', createMemoryRoutes(ctx));
  app.route('/v1/tags', createTagRoutes(ctx));
  app.route('/v1/chat', createChatRoutes(ctx));
  app.route('/v1/documents', createDocumentRoutes(ctx));
  app.route('/v1/search', createSearchRoutes(ctx));

  app.notFound((c) => c.json(errorBody('not_found', `No route for ${c.req.method} ${c.req.path}`), 404));

  app.onError(async (err, c) => {
    if (err instanceof HttpError) {
      return c.json(errorBody(err.code, err.message, err.details), err.status);
    }
    if (err instanceof DocumentParseError) {
      return err.code === 'unsupported_format'
        ? c.json(errorBody('unsupported_media_type', err.message), 415)
        : c.json(errorBody('unprocessable_document', err.message), 422);
    }
    if (err instanceof InvalidCursorError) {
      const details = [{ path: 'cursor', message: 'is not a cursor returned by this API' }];
      return c.json(errorBody('validation_error', 'Invalid query: cursor: is not a cursor returned by this API', details), 400);
    }
    // Hono's own errors (and any middleware added later) keep their status, but not their text/plain body.
    if (err instanceof HTTPException && err.status < 500) {
      const codes: Partial<Record<number, ErrorCode>> = { 401: 'unauthorized', 404: 'not_found', 413: 'payload_too_large' };
      const code = codes[err.status] ?? 'http_error';
      // Some middleware (bearer auth) puts its text in the response rather than the message.
      const message = err.message || (await err.getResponse().text()) || `HTTP ${err.status}`;
      return c.json(errorBody(code, message), err.status);
    }
    if (ctx.config.LOG_LEVEL !== 'silent') console.error(`${c.req.method} ${c.req.path} failed:`, err);
    // The cause stays in the log: a message could carry SQL or internals the client has no use for.
    return c.json(errorBody('internal_error', 'Internal server error'), 500);
  });

  return app;
}
