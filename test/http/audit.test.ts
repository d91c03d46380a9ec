import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { call, createApp, createTestContext } from './http-test-context.js';
import { documentValidator } from './openapi/document-validator.js';

describe('GET /v1/audit', () => {
  let ctx: AppContext;
  let app: Hono;
  beforeAll(async () => {
    ctx = await createTestContext();
    app = createApp(ctx);
    for (const userId of ['ann', 'ben', 'ann', 'cid', 'ann']) expect((await call(app, 'DELETE', `/v1/users/${userId}`)).status).toBe(200);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('lists entries newest first, page by page, as documented', async () => {
    const validator = documentValidator((await (await app.request('/openapi.json')).json()) as Record<string, unknown>);
    const seen: { id: number; userId: string }[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await call(app, 'GET', `/v1/audit?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      const validate = validator.response('GET', '/v1/audit', 200, 'application/json');
      expect(validate(res.body), JSON.stringify(validate.errors)).toBe(true);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.items);
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.map((e) => e.userId)).toEqual(['ann', 'cid', 'ann', 'ben', 'ann']);
    const ids = seen.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });

  it('filters by user, paginated the same way', async () => {
    const first = await call(app, 'GET', '/v1/audit?userId=ann&limit=2');
    expect(first.body.items.map((e: { userId: string }) => e.userId)).toEqual(['ann', 'ann']);
    const rest = await call(app, 'GET', `/v1/audit?userId=ann&limit=2&cursor=${first.body.nextCursor}`);
    expect(rest.body).toMatchObject({ items: [{ userId: 'ann' }], nextCursor: null });
    expect((await call(app, 'GET', '/v1/audit?userId=nobody')).body).toEqual({ items: [], nextCursor: null });
  });

  it('refuses bad query parameters with a 400 naming each', async () => {
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=1&limit=2', 'limit'],
      ['cursor=not-a-cursor', 'cursor'],
      [`cursor=${Buffer.from(JSON.stringify(['2025-01-01 00:00:00+00', 'abc'])).toString('base64url')}`, 'cursor'],
      [`cursor=${Buffer.from(JSON.stringify(['2025-01-01 00:00:00+00', '99999999999999999999'])).toString('base64url')}`, 'cursor'],
      [`cursor=${'c'.repeat(513)}`, 'cursor'],
      ['userId=has%20space', 'userId'],
      ['userId=a%00b', 'userId'],
      [`userId=${'u'.repeat(129)}`, 'userId'],
      ['action=user.deleted', 'action'],
    ];
    for (const [query, field] of cases) {
      const res = await call(app, 'GET', `/v1/audit?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe('validation_error');
      expect(
        res.body.error.details.map((d: { path: string }) => d.path),
        query,
      ).toEqual([field]);
    }
  });
});
