import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApp, createTestContext } from './http-test-context.js';

describe('/console/ and /docs/ with a trailing slash', () => {
  let ctx: AppContext;
  let app: Hono;
  beforeAll(async () => {
    // With keys, as a deployed server has them: the pages load without one, and so must their redirects.
    ctx = await createTestContext({ API_KEYS: 'alpha:alpha-slash-key-0123456789' });
    app = createApp(ctx);
  });
  afterAll(() => ctx?.close());

  it.each(['/console', '/docs'])('redirects %s/ to the page rather than answering a JSON 404', async (page) => {
    const res = await app.request(`http://localhost${page}/`);
    expect(res.status).toBe(301);
    const location = res.headers.get('location')!;
    // Relative, so that a proxy serving the API under a path prefix keeps it.
    expect(location).not.toMatch(/^\/|^https?:/);
    const target = new URL(location, `http://localhost/prefix${page}/`);
    expect(target.pathname).toBe(`/prefix${page}`);
    const followed = await app.request(new URL(location, `http://localhost${page}/`).href);
    expect(followed.status).toBe(200);
    expect(followed.headers.get('content-type')).toContain('text/html');
  });

  it('keeps the query string, answers HEAD too, and leaves other methods to the 404', async () => {
    const res = await app.request('http://localhost/docs/?tab=memories');
    expect(new URL(res.headers.get('location')!, 'http://localhost/docs/').href).toBe('http://localhost/docs?tab=memories');
    expect((await app.request('/console/', { method: 'HEAD' })).status).toBe(301);
    const post = await app.request('/console/', { method: 'POST' });
    expect(post.status).toBe(404);
    expect(((await post.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('leaves the pages and their assets where they are', async () => {
    expect((await app.request('/docs')).status).toBe(200);
    expect((await app.request('/docs/swagger-init.js')).status).toBe(200);
    expect((await app.request('/console')).status).toBe(200);
    expect((await app.request('/console/server.json')).status).toBe(200);
  });
});
