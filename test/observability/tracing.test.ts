import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { describeError } from '../../src/api/error-mapping.js';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { instrumentLlmProvider } from '../../src/observability/instrumented-llm.js';
import { otlpTracesUrl, startTracing } from '../../src/observability/otel-setup.js';
import { activeTraceId, withSpan } from '../../src/observability/tracing.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type ScriptedLlmServer, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { createCapturedLogger } from '../support/captured-logger.js';
import { call, createApp } from '../http/http-test-context.js';

/** The hash embedder, throwing on "explode" (a search that fails on the server). */
function explodingEmbedder(): Embedder {
  const hash = createHashEmbedder(64);
  return {
    id: hash.id,
    dimensions: hash.dimensions,
    maxInputTokens: hash.maxInputTokens,
    async embed(texts, options) {
      if (texts.includes('explode')) throw new Error('embedder exploded');
      return hash.embed(texts, options);
    },
    close: () => hash.close(),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TRACE_ID = /^[0-9a-f]{32}$/;

/** The SDK registered as the API's global provider, its spans kept in memory. */
function registerProvider(): { exporter: InMemorySpanExporter; provider: NodeTracerProvider } {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  return { exporter, provider };
}

function unregister(): void {
  trace.disable();
  context.disable();
  propagation.disable();
}

const named = (spans: readonly ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const one = (spans: readonly ReadableSpan[], name: string): ReadableSpan => {
  const found = named(spans, name);
  expect(
    found.map((s) => s.name),
    `spans named ${name} among ${spans.map((s) => s.name).join(', ')}`,
  ).toEqual([name]);
  return found[0]!;
};
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

async function until<T>(what: () => T | undefined | Promise<T | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await what();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('tracing the app', () => {
  const { logger, lines } = createCapturedLogger('info');
  let ctx: AppContext;
  let app: Hono;
  let exporter: InMemorySpanExporter;
  let provider: NodeTracerProvider | undefined;

  beforeAll(async () => {
    const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'info', MEMORY_EXTRACTION: 'off', JOB_POLL_MS: '20' });
    ctx = await createAppContext(config, { embedder: explodingEmbedder(), logger, describeError });
    app = createApp(ctx);
  });
  afterAll(() => ctx?.close());

  // Registered per test, after the context exists: spans come from the API's global tracer whenever it is asked.
  const register = () => {
    ({ exporter, provider } = registerProvider());
    lines.length = 0;
  };
  afterEach(async () => {
    await provider?.shutdown();
    provider = undefined;
    unregister();
  });

  it('makes a server span per request, with the HTTP conventions, whose trace id is the request id logged and echoed', async () => {
    register();
    const res = await app.request('/v1/memories/missing', { headers: { 'user-agent': 'tests/1' } });
    expect(res.status).toBe(404);
    const span = one(exporter.getFinishedSpans(), 'GET /v1/memories/:key');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v1/memories/:key',
      'url.path': '/v1/memories/missing',
      'url.scheme': 'http',
      'http.response.status_code': 404,
      'user_agent.original': 'tests/1',
      'memrag.tenant_id': 'default',
    });
    // A 4xx is the client's: the server span is not an error.
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    const traceId = span.spanContext().traceId;
    expect(traceId).toMatch(TRACE_ID);
    expect(res.headers.get('x-request-id')).toBe(traceId);
    const access = lines.filter((l) => l.msg === 'request');
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ requestId: traceId, status: 404 });
  });

  it("continues the client's trace from its traceparent header", async () => {
    register();
    const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpan = '00f067aa0ba902b7';
    const res = await app.request('/v1/memories/missing', { headers: { traceparent: `00-${clientTrace}-${clientSpan}-01`, 'x-request-id': 'mine' } });
    const span = one(exporter.getFinishedSpans(), 'GET /v1/memories/:key');
    expect(span.spanContext().traceId).toBe(clientTrace);
    expect(parentOf(span)).toBe(clientSpan);
    // With tracing on, the request id is the trace id, whatever the client sent as X-Request-Id.
    expect(res.headers.get('x-request-id')).toBe(clientTrace);
  });

  it('names a request no route matched by its method alone', async () => {
    register();
    const res = await app.request('/nowhere');
    expect(res.status).toBe(404);
    const span = one(exporter.getFinishedSpans(), 'GET');
    expect(span.attributes['http.route']).toBeUndefined();
    expect(span.attributes['http.response.status_code']).toBe(404);
  });

  it('marks a request that failed on the server, and the retrieval that threw, as errors', async () => {
    register();
    const res = await call(app, 'POST', '/v1/memories/search', { query: 'explode' });
    expect(res.status).toBe(500);
    const spans = exporter.getFinishedSpans();
    const request = one(spans, 'POST /v1/memories/search');
    expect(request.status.code).toBe(SpanStatusCode.ERROR);
    expect(request.attributes).toMatchObject({ 'http.response.status_code': 500, 'error.type': 'Error' });
    expect(request.events.map((e) => e.name)).toContain('exception');
    const retrieval = one(spans, 'retrieval memories');
    expect(retrieval.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'Error' });
    // The error's message stays in the log: spans carry no content, and messages quote what failed.
    expect(JSON.stringify(spans.map((s) => [s.status, s.events]))).not.toContain('exploded');
  });

  it('traces a memory search: the retrieval span with the rows of each side, under the request', async () => {
    register();
    await call(app, 'POST', '/v1/memories', { key: 'tea', content: 'Alice drinks green tea every afternoon' });
    await call(app, 'POST', '/v1/memories', { key: 'coffee', content: 'Bob takes his coffee black' });
    exporter.reset();
    const res = await call(app, 'POST', '/v1/memories/search', { query: 'green tea afternoon' });
    expect(res.status).toBe(200);
    const spans = exporter.getFinishedSpans();
    const request = one(spans, 'POST /v1/memories/search');
    const retrieval = one(spans, 'retrieval memories');
    expect(retrieval.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(retrieval.attributes).toMatchObject({ 'memrag.retrieval.corpus': 'memories', 'memrag.retrieval.mode': 'hybrid' });
    const vectorRows = retrieval.attributes['memrag.retrieval.vector.rows'] as number;
    const textRows = retrieval.attributes['memrag.retrieval.text.rows'] as number;
    expect(vectorRows).toBeGreaterThanOrEqual(1);
    expect(textRows).toBe(1);
    expect(retrieval.attributes['memrag.retrieval.fused.rows']).toBeGreaterThanOrEqual(1);
    const vector = one(spans, 'retrieval.vector');
    const text = one(spans, 'retrieval.text');
    expect(parentOf(vector)).toBe(retrieval.spanContext().spanId);
    expect(parentOf(text)).toBe(retrieval.spanContext().spanId);
    expect(vector.attributes['memrag.retrieval.vector.rows']).toBe(vectorRows);
    expect(text.attributes['memrag.retrieval.text.rows']).toBe(textRows);
  });

  describe('a chat turn with a model', () => {
    let llm: ScriptedLlmServer;
    afterEach(() => llm?.close());

    it('traces the turn, each model call with the GenAI conventions, each tool call, compaction and the after-turn hooks', async () => {
      register();
      await call(app, 'POST', '/v1/memories', { key: 'tea', content: 'Alice drinks green tea every afternoon' });
      llm = await startScriptedLlmServer([
        reply.toolCalls([{ id: 'call-1', name: 'search_memories', arguments: '{"query":"tea"}' }], { usage: { prompt_tokens: 120, completion_tokens: 8 } }),
        reply.text('Alice drinks green tea.', { usage: { prompt_tokens: 200, completion_tokens: 6 } }),
      ]);
      const model = instrumentLlmProvider(createLlmProvider({ baseURL: llm.url, apiKey: 'k', model: 'test-model', retry: { maxAttempts: 1 } }), {
        prices: { 'test-model': { inputPerMTok: 1, outputPerMTok: 2 } },
      });
      const chatApp = createApp({ ...ctx, llm: model });
      exporter.reset();
      const res = await call(chatApp, 'POST', '/v1/chat', { message: 'What does Alice drink?' });
      expect(res.status).toBe(200);
      await ctx.backgroundTasks.whenIdle();
      const spans = exporter.getFinishedSpans();
      const request = one(spans, 'POST /v1/chat');
      const traceId = request.spanContext().traceId;
      expect(res.headers.get('x-request-id')).toBe(traceId);

      const agent = one(spans, 'invoke_agent');
      expect(agent.spanContext().traceId).toBe(traceId);
      expect(agent.attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.request.model': 'test-model',
        'gen_ai.usage.input_tokens': 320,
        'gen_ai.usage.output_tokens': 14,
        'memrag.agent.iterations': 2,
        'memrag.agent.stop_reason': 'completed',
      });

      const calls = named(spans, 'chat test-model');
      expect(calls).toHaveLength(2);
      for (const span of calls) {
        expect(span.kind).toBe(SpanKind.CLIENT);
        expect(parentOf(span)).toBe(agent.spanContext().spanId);
      }
      const first = calls.find((s) => s.attributes['gen_ai.usage.input_tokens'] === 120)!;
      expect(first.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'test-model',
        'gen_ai.response.model': 'test-model',
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 8,
        'gen_ai.response.finish_reasons': ['tool_calls'],
      });
      expect(first.attributes['memrag.cost_usd']).toBeCloseTo((120 * 1 + 8 * 2) / 1_000_000, 12);

      const tool = one(spans, 'execute_tool search_memories');
      expect(parentOf(tool)).toBe(agent.spanContext().spanId);
      expect(tool.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'search_memories',
        'gen_ai.tool.call.id': 'call-1',
      });
      expect(tool.status.code).toBe(SpanStatusCode.UNSET);
      // What the tool did nests under it.
      const retrieval = named(spans, 'retrieval memories').find((s) => parentOf(s) === tool.spanContext().spanId);
      expect(retrieval).toBeDefined();

      const compactions = named(spans, 'compaction');
      expect(compactions.length).toBeGreaterThanOrEqual(1);
      expect(compactions[0]!.spanContext().traceId).toBe(traceId);
      expect(compactions[0]!.attributes).toMatchObject({ 'memrag.compaction.fits': true, 'memrag.compaction.strategies': [] });
      expect(compactions[0]!.attributes['memrag.compaction.tokens_before']).toBeGreaterThan(0);

      const hooks = spans.filter((s) => s.name.startsWith('after_turn '));
      expect(hooks.length).toBeGreaterThanOrEqual(1);
      for (const hook of hooks) {
        expect(hook.spanContext().traceId).toBe(traceId);
        expect(hook.attributes).toMatchObject({ 'memrag.conversation.id': res.body.conversationId, 'memrag.turn': 1 });
        expect(hook.attributes['memrag.hook.name']).toBe(hook.name.slice('after_turn '.length));
      }
    });

    it('marks a failed tool call as an error on its span', async () => {
      register();
      llm = await startScriptedLlmServer([reply.toolCalls([{ id: 'bad', name: 'search_memories', arguments: '{not json' }]), reply.text('Sorry.')]);
      const model = instrumentLlmProvider(createLlmProvider({ baseURL: llm.url, apiKey: 'k', model: 'test-model', retry: { maxAttempts: 1 } }));
      const res = await call(createApp({ ...ctx, llm: model }), 'POST', '/v1/chat', { message: 'Anything?' });
      expect(res.status).toBe(200);
      await ctx.backgroundTasks.whenIdle();
      const tool = one(exporter.getFinishedSpans(), 'execute_tool search_memories');
      expect(tool.status.code).toBe(SpanStatusCode.ERROR);
      expect(tool.attributes['error.type']).toBe('tool_error');
      // No price for the model: no cost on its spans.
      for (const span of named(exporter.getFinishedSpans(), 'chat test-model')) expect(span.attributes['memrag.cost_usd']).toBeUndefined();
    });
  });

  it('traces each job attempt as a trace of its own, with its kind, id, attempt and outcome', async () => {
    register();
    const res = await call(app, 'POST', '/v1/documents', { text: '# Glazes\n\nCeladon is a green glaze.', format: 'markdown', title: 'Glazes', async: true });
    expect(res.status).toBe(202);
    const jobId: string = res.body.job.id;
    const span = await until(() => exporter.getFinishedSpans().find((s) => s.name === 'job ingest' && s.attributes['memrag.job.id'] === jobId));
    expect(span.kind).toBe(SpanKind.CONSUMER);
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.attributes).toMatchObject({
      'memrag.job.kind': 'ingest',
      'memrag.job.id': jobId,
      'memrag.job.attempt': 1,
      'memrag.job.outcome': 'succeeded',
      'memrag.tenant_id': 'default',
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('records a throw inside withSpan as an exception with an error status, and throws it on', async () => {
    register();
    await expect(
      withSpan('failing', { a: 1 }, async () => {
        throw new RangeError('out of range');
      }),
    ).rejects.toThrow('out of range');
    const span = one(exporter.getFinishedSpans(), 'failing');
    expect(span.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'RangeError' });
    expect(span.attributes).toMatchObject({ a: 1, 'error.type': 'RangeError' });
    expect(span.events.map((e) => e.name)).toEqual(['exception']);
    expect(span.events[0]!.attributes).toMatchObject({ 'exception.type': 'RangeError', 'exception.stacktrace': expect.stringMatching(/^RangeError\n\s+at /) });
    expect(JSON.stringify(span.events)).not.toContain('out of range');
  });

  it('without a provider: startTracing starts nothing when no OTLP endpoint is set, and spans record nothing', async () => {
    const tracing = await startTracing(loadConfig({}), logger);
    expect(tracing.enabled).toBe(false);
    await tracing.shutdown();
    const span = trace.getTracer('memrag').startSpan('probe');
    expect(span.isRecording()).toBe(false);
    span.end();
  });

  it('without a provider: keeps the request ids of today, the caller’s or a UUID, and no trace id', async () => {
    lines.length = 0;
    const generated = await app.request('/v1/memories/missing');
    expect(generated.headers.get('x-request-id')).toMatch(UUID);
    const given = await app.request('/v1/memories/missing', {
      headers: { 'x-request-id': 'abc-123', traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` },
    });
    expect(given.headers.get('x-request-id')).toBe('abc-123');
    expect(lines.filter((l) => l.msg === 'request').map((l) => l.requestId)).toEqual([generated.headers.get('x-request-id'), 'abc-123']);
    await withSpan('nothing', {}, () => expect(activeTraceId()).toBeUndefined());
  });
});

describe('startTracing', () => {
  it('names the traces URL from the endpoints, the traces one as it is', () => {
    const base = { OTEL_SERVICE_NAME: 'memrag', OTEL_SDK_DISABLED: false } as const;
    expect(otlpTracesUrl({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: undefined, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined })).toBeUndefined();
    expect(otlpTracesUrl({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined })).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(otlpTracesUrl({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom' })).toBe(
      'http://b:4318/custom',
    );
    expect(
      otlpTracesUrl({ ...base, OTEL_SDK_DISABLED: true, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined }),
    ).toBeUndefined();
  });

  describe('with an endpoint', () => {
    let collector: Server;
    const received: Array<{ url: string | undefined; body: string }> = [];
    beforeAll(async () => {
      collector = createServer((req: IncomingMessage, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          received.push({ url: req.url, body: Buffer.concat(chunks).toString('utf8') });
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        });
      });
      await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
    });
    afterAll(async () => {
      unregister();
      await new Promise((r) => collector.close(r));
    });

    it('registers the SDK, exports spans over OTLP to the endpoint, and flushes them at shutdown', async () => {
      const { port } = collector.address() as AddressInfo;
      const { logger, lines } = createCapturedLogger('info');
      const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_SERVICE_NAME: 'memrag-test' });
      const tracing = await startTracing(config, logger);
      expect(tracing).toMatchObject({ enabled: true, url: `http://127.0.0.1:${port}/v1/traces` });
      expect(lines.some((l) => l.msg.startsWith('tracing: exporting spans'))).toBe(true);
      let traceId: string | undefined;
      await withSpan('exported-span', {}, () => {
        traceId = activeTraceId();
      });
      expect(traceId).toMatch(TRACE_ID);
      await tracing.shutdown();
      expect(received.map((r) => r.url)).toContain('/v1/traces');
      const body = received.map((r) => r.body).join('\n');
      expect(body).toContain('exported-span');
      expect(body).toContain('memrag-test');
    });
  });
});
