import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { call, createApp, createTestContext } from './http-test-context.js';

describe('GET /v1/memories/{key} of a fact not valid at validAt', () => {
  let ctx: AppContext;
  let app: Hono;
  beforeAll(async () => {
    ctx = await createTestContext();
    app = createApp(ctx);
    const saved = await call(app, 'PUT', '/v1/memories/job', { content: 'Alice worked at the bakery', userId: 'alice', validUntil: '2022-06-30T00:00:00Z' });
    expect(saved.status, JSON.stringify(saved.body)).toBeLessThan(300);
  });
  afterAll(() => ctx?.close());

  it('says the memory exists but is not valid now, naming validAt, rather than that there is no memory', async () => {
    const res = await call(app, 'GET', '/v1/memories/job?userId=alice');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    expect(res.body.error.message).toMatch(/^Memory "job" of user "alice" exists but is not valid at validAt=\d{4}-\d\d-\d\dT[\d:.]+Z /);
    expect(res.body.error.message).toContain('until 2022-06-30T00:00:00.000Z');
    expect(res.body.error.message).toContain('pass validAt to read it');
  });

  it('names the validAt asked for', async () => {
    const res = await call(app, 'GET', '/v1/memories/job?userId=alice&validAt=2023-01-01T00:00:00Z');
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('not valid at validAt=2023-01-01T00:00:00.000Z');
  });

  it('reads it at a validAt when it held', async () => {
    const res = await call(app, 'GET', '/v1/memories/job?userId=alice&validAt=2022-01-01T00:00:00Z');
    expect(res.status).toBe(200);
    expect(res.body.memory).toMatchObject({ key: 'job', content: 'Alice worked at the bakery' });
  });

  it('still says there is no memory where there is none, in this scope or at all', async () => {
    for (const path of ['/v1/memories/job?userId=bob', '/v1/memories/absent?userId=alice']) {
      const res = await call(app, 'GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body.error.message, path).toMatch(/^No memory with key /);
    }
  });
});
