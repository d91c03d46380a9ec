import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { createApp, createTestContext } from './http-test-context.js';

describe('rate limit', () => {
  let ctx: AppContext;
  let app: Hono;
  beforeAll(async () => {
    // One token a second, three at once.
    ctx = await createTestContext({ RATE_LIMIT_PER_MINUTE: '60', RATE_LIMIT_BURST: '3' });
    app = createApp(ctx);
  });
  afterAll(() => ctx?.close());

  it('answers 429 with Retry-After and a JSON error once the burst is spent; probes are never limited', async () => {
    for (let i = 0; i < 3; i++) expect((await app.request('/v1/tags')).status).toBe(200);
    const limited = await app.request('/v1/tags');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await limited.json()).toEqual({
      error: { code: 'rate_limited', message: expect.stringContaining('60 per minute'), details: null },
    });
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await app.request(path)).status).toBe(200);

    // A token comes back after a second.
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    expect((await app.request('/v1/tags')).status).toBe(200);
    expect((await app.request('/v1/tags')).status).toBe(429);
  });

  it('behind a trusted proxy, tells clients apart by the hop the proxy added, not by what they claim', async () => {
    const proxied = createApp({ ...ctx, config: { ...ctx.config, TRUST_PROXY: true } });
    const from = (forwardedFor: string) => proxied.request('/v1/tags', { headers: { 'x-forwarded-for': forwardedFor } });
    const statuses = async (forwardedFor: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await from(forwardedFor)).status);
      return out;
    };
    expect(await statuses('203.0.113.7', 4)).toEqual([200, 200, 200, 429]);
    // A forged first entry does not buy a new budget: the last hop is still 203.0.113.7.
    expect(await statuses('198.51.100.1, 203.0.113.7', 1)).toEqual([429]);
    expect(await statuses('203.0.113.8', 1)).toEqual([200]);
  });
});

describe('rate limit per API key', () => {
  let ctx: AppContext;
  let app: Hono;
  beforeAll(async () => {
    ctx = await createTestContext({ API_KEYS: 'key-one,key-two', RATE_LIMIT_PER_MINUTE: '60', RATE_LIMIT_BURST: '2' });
    app = createApp(ctx);
  });
  afterAll(() => ctx?.close());

  const get = (key?: string) => app.request('/v1/tags', key ? { headers: { authorization: `Bearer ${key}` } } : {});

  it('gives each key its own budget, and limits wrong keys by client address', async () => {
    expect([(await get('key-one')).status, (await get('key-one')).status, (await get('key-one')).status]).toEqual([200, 200, 429]);
    expect((await get('key-two')).status).toBe(200);
    // Guessing keys spends the address's budget: 401s first, then 429s.
    expect([(await get('guess-1')).status, (await get('guess-2')).status, (await get('guess-3')).status]).toEqual([401, 401, 429]);
  });
});

describe('CORS', () => {
  let ctx: AppContext;
  let app: Hono;
  beforeAll(async () => {
    ctx = await createTestContext({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173', API_KEYS: 'secret' });
    app = createApp(ctx);
  });
  afterAll(() => ctx?.close());

  const preflight = (origin: string) =>
    app.request('/v1/memories', {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });

  it('answers the preflight of an allowed origin, before the API key check', async () => {
    const res = await preflight('https://app.example.com');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    // A browser's OpenAI-compatible client may name the user and the conversation in headers.
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-memrag-user-id');
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('vary')).toContain('Origin');
  });

  it('gives other origins nothing to go on', async () => {
    const res = await preflight('https://evil.example.com');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('lets a browser read the request id and Retry-After of an actual reply', async () => {
    const res = await app.request('/v1/tags', { headers: { origin: 'http://localhost:5173', authorization: 'Bearer secret' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(res.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
    expect(res.headers.get('access-control-expose-headers')).toContain('Retry-After');
  });

  it('refuses a configured origin that is not one', () => {
    expect(() => loadConfig({ CORS_ORIGINS: 'https://app.example.com/path' })).toThrow(/CORS_ORIGINS/);
    expect(() => loadConfig({ CORS_ORIGINS: 'app.example.com' })).toThrow(/CORS_ORIGINS/);
    expect(loadConfig({ CORS_ORIGINS: 'https://App.Example.com/, *' }).CORS_ORIGINS).toEqual(['https://app.example.com', '*']);
  });
});

describe('secure headers', () => {
  let ctx: AppContext;
  let app: Hono;
  beforeAll(async () => {
    ctx = await createTestContext({ MAX_BODY_BYTES: '64' });
    app = createApp(ctx);
  });
  afterAll(() => ctx?.close());

  it('are on every reply: success, 404, 413', async () => {
    const replies = [
      await app.request('/healthz'),
      await app.request('/v1/memories/missing'),
      await app.request('/v1/memories', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'x'.repeat(100) }),
      }),
    ];
    expect(replies.map((r) => r.status)).toEqual([200, 404, 413]);
    for (const res of replies) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('strict-transport-security')).toMatch(/^max-age=\d+/);
      expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    }
  });

  it('come without CORS headers when no origin is configured', async () => {
    const res = await app.request('/v1/tags', { headers: { origin: 'https://app.example.com' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

/** The hash embedder, but a text containing "slowly" takes `delayMs`, or until its signal aborts. */
function slowEmbedder(delayMs: number): Embedder & { aborts: unknown[] } {
  const hash = createHashEmbedder(64);
  const aborts: unknown[] = [];
  return {
    id: hash.id,
    dimensions: hash.dimensions,
    maxInputTokens: hash.maxInputTokens,
    aborts,
    async embed(texts, options) {
      if (texts.some((t) => t.includes('slowly'))) {
        const signal = options?.signal;
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, delayMs);
          signal?.addEventListener(
            'abort',
            () => {
              clearTimeout(timer);
              aborts.push(signal.reason);
              reject(signal.reason);
            },
            { once: true },
          );
        });
      }
      return hash.embed(texts);
    },
    close: () => hash.close(),
  };
}

describe('request timeout', () => {
  let ctx: AppContext;
  let app: Hono;
  const embedder = slowEmbedder(800);
  beforeAll(async () => {
    ctx = await createAppContext(loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent', REQUEST_TIMEOUT_MS: '200' }), { embedder });
    app = createApp(ctx);
    await ctx.memories.forTenant('default').save({ key: 'tea', content: 'Alice drinks green tea slowly' });
  });
  afterAll(() => ctx?.close());

  const post = (path: string, body: unknown) =>
    app.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('answers 504 with a JSON error, and aborts the work that listens to the request signal', async () => {
    embedder.aborts.length = 0;
    const started = performance.now();
    const res = await post('/v1/search', { query: 'who drinks tea slowly?' });
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({
      error: { code: 'request_timeout', message: 'The request did not complete within 200 ms', details: null },
    });
    expect(performance.now() - started).toBeLessThan(700);
    // The embedding was cancelled rather than left to run behind the 504.
    expect(embedder.aborts).toHaveLength(1);
    expect(embedder.aborts[0]).toMatchObject({ code: 'request_timeout' });
  });

  it('leaves fast requests alone', async () => {
    expect((await post('/v1/search', { query: 'who drinks tea?' })).status).toBe(200);
  });

  it('aborts the work through a listening server too, whose requests are @hono/node-server’s own', async () => {
    const server = await new Promise<ServerType & { url: string }>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
        resolve(Object.assign(s, { url: `http://127.0.0.1:${info.port}` })),
      );
    });
    try {
      embedder.aborts.length = 0;
      const send = (query: string) =>
        fetch(`${server.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
      const res = await send('who drinks tea slowly?');
      expect(res.status).toBe(504);
      expect(await res.json()).toMatchObject({ error: { code: 'request_timeout' } });
      expect(embedder.aborts).toHaveLength(1);
      expect(embedder.aborts[0]).toMatchObject({ code: 'request_timeout' });
      const fast = await send('who drinks tea?');
      expect(fast.status).toBe(200);
      expect(await fast.json()).toMatchObject({ hits: expect.any(Array) });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('never cuts /v1/chat, which bounds its own turns', async () => {
    const res = await post('/v1/chat', { message: 'who drinks tea slowly?' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ mode: 'extractive' });
    const streamed = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ message: 'who drinks tea slowly?' }),
    });
    const events = await streamed.text();
    expect(events).toContain('event: done');
    expect(events).not.toContain('event: error');
  });
});
