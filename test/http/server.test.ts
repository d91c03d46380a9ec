import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApp, createTestContext } from './http-test-context.js';

describe('through a listening server', () => {
  let ctx: AppContext;
  let server: ServerType;
  let base: string;

  beforeAll(async () => {
    ctx = await createTestContext({ MAX_BODY_BYTES: '4096' });
    const app = createApp(ctx);
    base = await new Promise<string>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
    });
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await ctx?.close();
  });

  const send = (method: string, path: string, body?: unknown) =>
    fetch(base + path, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });

  it('saves, then finds by search', async () => {
    const saved = await send('POST', '/v1/memories', { key: 'tea', content: 'Alice prefers green tea in the afternoon', tags: ['Alice'] });
    expect(saved.status).toBe(201);
    await send('POST', '/v1/memories', { key: 'car', content: 'Bob drives a red car', tags: ['bob'] });

    const res = await send('POST', '/v1/memories/search', { query: 'what tea does Alice drink in the afternoon?', topK: 1, tagsAll: ['alice'] });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const { hits } = (await res.json()) as { hits: { memory: { key: string; tags: string[] }; score: number }[] };
    expect(hits).toHaveLength(1);
    expect(hits[0]?.memory).toMatchObject({ key: 'tea', tags: ['alice'] });
    expect(hits[0]?.score).toBeGreaterThan(0);
  });

  it('answers 413 as JSON for a body past the limit', async () => {
    const res = await send('POST', '/v1/memories', { key: 'big', content: 'x'.repeat(5000) });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { code: 'payload_too_large' } });
    expect((await send('GET', '/v1/memories/big')).status).toBe(404);
  });
});
