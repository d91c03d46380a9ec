import type { MiddlewareHandler } from 'hono';

/**
 * The console's CSP: its own scripts, styles and API calls, nothing inline and nothing from
 * another origin (its packages are bundled from node_modules, never loaded from a CDN).
 * `blob:` downloads are navigations, which CSP does not govern, so exports need no exception.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/**
 * Replaces the API's CSP (which allows nothing) on the console's pages. Registered before the
 * app's secure-headers middleware, so that it runs after it: that one sets headers on the way out.
 */
export const consoleContentSecurityPolicy: MiddlewareHandler = async (c, next) => {
  await next();
  c.res.headers.set('Content-Security-Policy', CONSOLE_CSP);
};
