import type { MiddlewareHandler } from 'hono';

/**
 * Sends a browser from a page's address with a trailing slash (`/docs/`) to the page (`/docs`),
 * which would otherwise be a JSON 404; served there, the page's relative URLs would miss too.
 * The target is relative (`../docs`), like the pages' own URLs, so that it also holds behind a
 * proxy that serves the API under a path prefix. Other methods fall through to the 404.
 */
export function trailingSlashRedirect(): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return next();
    const page = c.req.path.replace(/\/+$/, '').split('/').pop() ?? '';
    if (page === '') return next();
    return c.redirect(`../${page}${new URL(c.req.url).search}`, 301);
  };
}
