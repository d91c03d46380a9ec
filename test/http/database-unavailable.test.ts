import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { type LogLine, createCapturedLogger } from '../support/captured-logger.js';
import { call, createApp, createTestContext } from './http-test-context.js';

/**
 * The reply when the database cannot be reached, on the embedded database (closed under the
 * app); the server-database outage is test/robustness/database-outage.postgres.test.ts.
 */
describe('503 database_unavailable', () => {
  let ctx: AppContext;
  let app: Hono;
  let lines: LogLine[];

  beforeAll(async () => {
    ctx = await createTestContext();
    const captured = createCapturedLogger('warn');
    lines = captured.lines;
    app = createApp({ ...ctx, logger: captured.logger });
  });
  afterAll(async () => {
    // The database is already closed by then; the rest of the context still needs closing.
    await ctx?.close().catch(() => {});
  });

  it('the OpenAPI document describes the 503 on every /v1 route', async () => {
    const document = (await call(app, 'GET', '/openapi.json')).body;
    for (const [path, operations] of Object.entries<Record<string, { responses: Record<string, unknown> }>>(document.paths)) {
      if (!path.startsWith('/v1/')) continue;
      for (const [method, op] of Object.entries(operations)) expect(op.responses, `${method} ${path}`).toHaveProperty('503');
    }
  });

  it('a failing query is still a 500: only an unreachable database is worth a retry', async () => {
    await ctx.database.db.execute(sql`DROP TABLE memories CASCADE`);
    const res = await call(app, 'GET', '/v1/memories/k');
    expect(res.status).toBe(500);
    expect(res.headers.get('retry-after')).toBeNull();
  });

  it('a closed database answers 503 with Retry-After, as JSON without the cause, logged as a warning; /readyz says 503', async () => {
    lines.length = 0;
    await ctx.database.close();
    for (const [method, path, body] of [
      ['GET', '/v1/memories/k'],
      ['POST', '/v1/documents', { text: 'Green tea is steamed.' }],
      ['POST', '/v1/search', { query: 'tea' }],
    ] as const) {
      const res = await call(app, method, path, body);
      expect(res, `${method} ${path}`).toMatchObject({ status: 503, body: { error: { code: 'database_unavailable', details: null } } });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(JSON.stringify(res.body)).not.toContain('PGlite');
    }
    expect(lines.filter((l) => l.msg !== 'request')[0]).toMatchObject({ level: 'warn', msg: 'GET /v1/memories/k: database unavailable' });
    const ready = await call(app, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect((await call(app, 'GET', '/healthz')).status).toBe(200);
  });
});
