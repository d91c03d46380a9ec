import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import type { Logger } from '../../src/observability/logger.js';
import { metricsRegistry, recordConversationCompaction } from '../../src/observability/metrics.js';
import { type LogLine, createCapturedLogger } from '../support/captured-logger.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type ScriptedLlmServer, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { createApp } from './http-test-context.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The hash embedder; "explode" makes it throw, and "log me" makes it write a log line (code with no Hono context). */
function scriptedEmbedder(logger: Logger): Embedder {
  const hash = createHashEmbedder(64);
  return {
    id: hash.id,
    dimensions: hash.dimensions,
    maxInputTokens: hash.maxInputTokens,
    async embed(texts) {
      if (texts.includes('explode')) throw new Error('embedder exploded');
      if (texts.includes('log me')) logger.info({ texts: texts.length }, 'embedding deep inside a store');
      return hash.embed(texts);
    },
    close: () => hash.close(),
  };
}

async function contextWith(env: Record<string, string>, options: { logger?: Logger; embedder?: Embedder } = {}): Promise<AppContext> {
  const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent', ...env });
  return createAppContext(config, { embedder: options.embedder ?? createHashEmbedder(64), ...(options.logger ? { logger: options.logger } : {}) });
}

const postJson = (app: Hono, path: string, body: unknown, headers: Record<string, string> = {}) =>
  app.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('request ids and logs', () => {
  const { logger, lines } = createCapturedLogger('info');
  let ctx: AppContext;
  let app: Hono;
  beforeAll(async () => {
    ctx = await contextWith({ LOG_LEVEL: 'info' }, { logger, embedder: scriptedEmbedder(logger) });
    app = createApp(ctx);
  });
  afterAll(() => ctx?.close());

  const accessLines = () => lines.filter((l) => l.msg === 'request');

  it('generates an id, echoes it, and writes one access line carrying it', async () => {
    lines.length = 0;
    const res = await app.request('/v1/memories/missing');
    expect(res.status).toBe(404);
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(UUID);
    expect(accessLines()).toEqual([
      expect.objectContaining({
        level: 'info',
        requestId: id,
        method: 'GET',
        route: '/v1/memories/:key',
        path: '/v1/memories/missing',
        status: 404,
        durationMs: expect.any(Number),
        time: expect.any(String),
      }),
    ]);
  });

  it('keeps an incoming id that looks like one, and replaces anything else', async () => {
    const idFor = async (sent: string) => (await app.request('/healthz', { headers: { 'x-request-id': sent } })).headers.get('x-request-id');
    expect(await idFor('client-42_abc=')).toBe('client-42_abc=');
    for (const odd of ['has space', '<script>', 'a'.repeat(129), '../etc;passwd']) {
      const id = await idFor(odd);
      expect(id).toMatch(UUID);
    }
    expect(accessLines().at(-1)?.requestId).toMatch(UUID);
  });

  it('puts the id on every line written while serving, from stores and error handlers too', async () => {
    lines.length = 0;
    const logged = await postJson(app, '/v1/memories/search', { query: 'log me' }, { 'x-request-id': 'req-deep' });
    expect(logged.status).toBe(200);
    const failed = await postJson(app, '/v1/memories/search', { query: 'explode' }, { 'x-request-id': 'req-boom' });
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({ error: { code: 'internal_error', message: 'Internal server error' } });

    expect(lines.every((l) => l.requestId === 'req-deep' || l.requestId === 'req-boom')).toBe(true);
    expect(lines.filter((l) => l.requestId === 'req-deep').map((l: LogLine) => l.msg)).toEqual(['embedding deep inside a store', 'request']);
    const boom = lines.filter((l) => l.requestId === 'req-boom');
    expect(boom.map((l) => [l.level, l.msg])).toEqual([
      ['error', 'POST /v1/memories/search failed'],
      ['error', 'request'],
    ]);
    // The cause is in the log (with its stack), not in the reply.
    expect(boom[0]!.err).toMatchObject({ message: 'embedder exploded', stack: expect.stringContaining('embedder exploded') });
    expect(boom[1]).toMatchObject({ status: 500, route: '/v1/memories/search' });
  });
});

describe('/readyz', () => {
  let ctx: AppContext;
  let app: Hono;
  beforeAll(async () => {
    ctx = await contextWith({});
    app = createApp(ctx);
  });
  afterAll(() => ctx?.close().catch(() => {}));

  it('is 200 while the database answers and the embedder is open, then 503 naming what is wrong', async () => {
    const ready = await app.request('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: { ok: true }, embedder: { ok: true } } });

    await ctx.embedder.close();
    const noEmbedder = await app.request('/readyz');
    expect(noEmbedder.status).toBe(503);
    expect(await noEmbedder.json()).toMatchObject({
      error: { code: 'not_ready', message: 'Not ready: embedder: closed', details: [{ path: 'embedder', message: 'embedder: closed' }] },
      checks: { database: { ok: true }, embedder: { ok: false } },
    });

    await ctx.database.close();
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; details: { path: string }[] }; checks: { database: { ok: boolean; reason: string } } };
    expect(body.error.code).toBe('not_ready');
    expect(body.error.details.map((d) => d.path)).toEqual(['database', 'embedder']);
    expect(body.checks.database).toMatchObject({ ok: false, reason: expect.stringMatching(/^database: /) });
    // Liveness is another matter: the process is still up.
    expect((await app.request('/healthz')).status).toBe(200);
  });
});

describe('/metrics', () => {
  let ctx: AppContext;
  let app: Hono;
  let llmServer: ScriptedLlmServer;
  beforeAll(async () => {
    // The counters are the process's: files that ran before this one in the worker counted into them.
    metricsRegistry.resetMetrics();
    llmServer = await startScriptedLlmServer([
      reply.text('Alice drinks green tea [1].', { usage: { prompt_tokens: 100, completion_tokens: 20 }, cachedTokens: 64, reasoningTokens: 12 }),
      reply.text('Green tea [1].', { usage: { prompt_tokens: 50, completion_tokens: 7 }, cachedTokens: 32, chunkSize: 3 }),
    ]);
    // Extraction off: its requests would take the scripted replies these counts are about.
    const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'off' });
    const llm = createLlmProvider({ baseURL: llmServer.url, apiKey: 'test', model: 'scripted-metrics-model', retry: { maxAttempts: 1 } });
    ctx = await createAppContext(config, { embedder: createHashEmbedder(64), llm });
    app = createApp(ctx);
    await ctx.memories.forTenant('default').save({ key: 'tea', content: 'Alice drinks green tea' });
  });
  afterAll(async () => {
    await ctx?.close();
    await llmServer?.close();
  });

  const scrape = async () => {
    const res = await app.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text();
  };

  it('has the request latency histogram by route pattern and status, never the raw path', async () => {
    await app.request('/v1/memories/some-raw-key-xyz');
    const text = await scrape();
    expect(text).toContain('# TYPE memrag_http_request_duration_seconds histogram');
    expect(text).toMatch(/^memrag_http_request_duration_seconds_count\{method="GET",route="\/v1\/memories\/:key",status="404"\} [1-9]\d*$/m);
    expect(text).toMatch(/^memrag_http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/v1\/memories\/:key",status="404"\} \d+$/m);
    expect(text).not.toContain('some-raw-key-xyz');
    // The process's own gauges come along, memory first among them.
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d+/m);
  });

  it('times the embedder and counts what it embedded', async () => {
    await postJson(app, '/v1/memories/search', { query: 'tea' });
    const text = await scrape();
    expect(text).toMatch(/^memrag_embedding_duration_seconds_count\{embedder="test:hash-64",outcome="ok"\} [1-9]\d*$/m);
    expect(text).toMatch(/^memrag_embedded_texts_total\{embedder="test:hash-64"\} [1-9]\d*$/m);
  });

  it('counts the LLM tokens and times its calls, streamed or not', async () => {
    expect((await postJson(app, '/v1/chat', { message: 'What does Alice drink?' })).status).toBe(200);
    const stream = await postJson(app, '/v1/chat', { message: 'What does Alice drink?', stream: true });
    expect(await stream.text()).toContain('event: done');
    const text = await scrape();
    const model = 'model="scripted-metrics-model"';
    expect(text).toContain(`memrag_llm_tokens_total{${model},type="prompt"} 150`);
    expect(text).toContain(`memrag_llm_tokens_total{${model},type="completion"} 27`);
    // The provider's cached prompt tokens and reasoning tokens, streamed or not, counted apart.
    expect(text).toContain(`memrag_llm_cached_tokens_total{${model}} 96`);
    expect(text).toContain(`memrag_llm_reasoning_tokens_total{${model}} 12`);
    expect(text).toContain(`memrag_llm_request_duration_seconds_count{${model},mode="complete",outcome="ok"} 1`);
    expect(text).toContain(`memrag_llm_request_duration_seconds_count{${model},mode="stream",outcome="ok"} 1`);
    expect(text).toContain(`memrag_llm_time_to_first_token_seconds_count{${model}} 1`);
  });

  it('counts compactions reported by recordConversationCompaction', async () => {
    recordConversationCompaction('checkpoints', { before: 9000, after: 6000 });
    recordConversationCompaction('checkpoints');
    recordConversationCompaction('drop_turns', { before: 6000, after: 5000 });
    const text = await scrape();
    expect(text).toContain('memrag_compactions_total{strategy="checkpoints"} 2');
    expect(text).toContain('memrag_compactions_total{strategy="drop_turns"} 1');
    expect(text).toContain('memrag_compaction_tokens_saved_total{strategy="checkpoints"} 3000');
  });
});

describe('through a listening server', () => {
  const { logger, lines } = createCapturedLogger('info');
  let ctx: AppContext;
  let server: ServerType;
  let base: string;
  beforeAll(async () => {
    ctx = await contextWith({ LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '60', RATE_LIMIT_BURST: '4' }, { logger });
    const app = createApp(ctx);
    base = await new Promise<string>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
    });
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await ctx?.close();
  });

  it('echoes and logs the request id, secures the reply, and limits the client by its address', async () => {
    const res = await fetch(`${base}/v1/tags`, { headers: { 'x-request-id': 'from-the-proxy-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('from-the-proxy-1');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'request', requestId: 'from-the-proxy-1', route: '/v1/tags', status: 200 }));

    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await fetch(`${base}/v1/tags`);
      statuses.push(last.status);
      await last.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await (await fetch(`${base}/v1/tags`)).json()).toMatchObject({ error: { code: 'rate_limited' } });
  });
});
