import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { secureHeaders } from 'hono/secure-headers';

/**
 * hono/secure-headers' defaults (nosniff, no referrer, HSTS, same-origin opener and resource
 * policies, …) plus a CSP that allows nothing: every reply is JSON or an event stream, so a
 * browser has no reason to run, embed or frame any of it.
 */
export function apiSecureHeaders(): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
    xFrameOptions: 'DENY',
  });
}

/**
 * CORS for the configured origins (`*` for any); none configured means no CORS headers, so
 * browsers keep pages of other origins out. Preflights are answered here, before the rate limit
 * and the API key check, which a browser's preflight could never pass.
 */
export function corsFor(origins: readonly string[]): MiddlewareHandler | undefined {
  if (origins.length === 0) return undefined;
  return cors({
    origin: origins.includes('*') ? '*' : [...origins],
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    // The X-Memrag-* headers name the user and the conversation on the OpenAI-compatible routes.
    allowHeaders: ['Authorization', 'Content-Type', 'Accept', 'X-Request-Id', 'X-Memrag-User-Id', 'X-Memrag-Conversation-Id'],
    // Without these a browser script cannot read the id to quote, or how long to back off.
    exposeHeaders: ['X-Request-Id', 'Retry-After'],
    maxAge: 600,
  });
}
