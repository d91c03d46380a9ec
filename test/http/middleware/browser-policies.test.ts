import { inspectRoutes } from 'hono/dev';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../../src/app-context.js';
import { createApp } from '../../../src/http/app.js';
import { createTestContext } from '../http-test-context.js';

const ORIGIN = 'https://app.example';

describe('CORS', () => {
  let ctx: AppContext;
  let app: ReturnType<typeof createApp>;
  beforeAll(async () => {
    ctx = await createTestContext({ CORS_ORIGINS: ORIGIN });
    app = createApp(ctx);
  });
  afterAll(() => ctx?.close());

  const preflight = (method: string, path: string) =>
    app.request(path, {
      method: 'OPTIONS',
      headers: { Origin: ORIGIN, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'content-type' },
    });

  const allowed = async (method: string, path: string) =>
    ((await preflight(method, path)).headers.get('access-control-allow-methods') ?? '').split(',').map((m) => m.trim());

  it('allows PATCH in a preflight, which editing an agent or a memory from a browser sends', async () => {
    const res = await preflight('PATCH', '/v1/memories/tea');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(await allowed('PATCH', '/v1/memories/tea')).toContain('PATCH');
  });

  it('allows every method a route of the app answers', async () => {
    const methods = new Set(inspectRoutes(app).flatMap((r) => (r.isMiddleware || r.method === 'ALL' ? [] : [r.method])));
    expect(methods).toContain('PATCH');
    const listed = await allowed('GET', '/v1/memories');
    expect([...methods].filter((m) => !listed.includes(m))).toEqual([]);
  });
});
