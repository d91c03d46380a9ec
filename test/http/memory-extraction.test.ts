import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { describeError } from '../../src/api/error-mapping.js';
import { FACT_EXTRACTION_INSTRUCTIONS, MEMORY_DECISION_INSTRUCTIONS } from '../../src/memory/extraction/extraction-prompts.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type ScriptedLlmServer, type ScriptedRequest, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { call, createApp, createTestContext } from './http-test-context.js';

const isFacts = (r: ScriptedRequest) => r.body.messages[0]?.content === FACT_EXTRACTION_INSTRUCTIONS;
const isDecision = (r: ScriptedRequest) => r.body.messages[0]?.content === MEMORY_DECISION_INSTRUCTIONS;

/** The extraction job a chat turn queued, once it ended. */
async function extractionOf(app: Hono, conversationId: string, before: Set<string>) {
  const until = Date.now() + 10_000;
  for (;;) {
    const jobs = (await call(app, 'GET', '/v1/jobs?kind=extraction&limit=100')).body.items.filter((j: { id: string }) => !before.has(j.id));
    if (jobs.length > 1) throw new Error(`more than one extraction job for ${conversationId}`);
    if (jobs[0] && ['succeeded', 'failed'].includes(jobs[0].status)) return jobs[0];
    if (Date.now() > until) throw new Error(`no extraction job ended for ${conversationId}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
const extractionJobIds = async (app: Hono) =>
  new Set<string>((await call(app, 'GET', '/v1/jobs?kind=extraction&limit=100')).body.items.map((j: { id: string }) => j.id));

describe('memory extraction over HTTP', () => {
  let llm: ScriptedLlmServer;
  let ctx: AppContext;
  let plain: AppContext;
  // Set by a test: the fact request waits for it, so the chat reply must come first.
  let releaseFacts: (() => void) | undefined;

  beforeAll(async () => {
    llm = await startScriptedLlmServer((request) => {
      if (isFacts(request)) {
        const text = String(request.body.messages[1]?.content);
        const [fact, quote] = text.includes('Gdansk')
          ? ['The user lives in Gdansk.', 'we JUST moved to gdansk']
          : text.includes('Riga')
            ? ['The user has worked in Riga since 2021.', undefined]
            : ['The user plays the cello.', 'playing the cello'];
        const validFrom = text.includes('Riga') ? { validFrom: '2021' } : {};
        return reply.text(JSON.stringify({ facts: [{ content: fact, tags: ['profile'], ...(quote ? { quote } : {}), ...validFrom }] }), {
          delayMs: releaseFacts ? 1_500 : 0,
        });
      }
      if (isDecision(request)) return reply.text('{"decisions":[{"fact":0,"event":"ADD"}]}');
      return reply.text('Nice, noted.');
    });
    // The model is the context's own: its job workers extract with it, whatever app is built over it.
    const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'on', JOB_POLL_MS: '20' });
    const model = createLlmProvider({ baseURL: llm.url, apiKey: 'k', model: 'scripted', retry: { maxAttempts: 1 } });
    ctx = await createAppContext(config, { embedder: createHashEmbedder(64), llm: model, describeError });
    plain = await createTestContext();
  });
  afterAll(async () => {
    await ctx?.close();
    await plain?.close();
    await llm?.close();
  });
  const appWith = (context: AppContext) =>
    createApp({ ...context, llm: createLlmProvider({ baseURL: llm.url, apiKey: 'k', model: 'scripted', retry: { maxAttempts: 1 } }) });

  it('POST /v1/memories/extract answers the decisions and writes the memories in the user scope', async () => {
    const res = await call(appWith(ctx), 'POST', '/v1/memories/extract', {
      messages: [
        { role: 'user', content: 'I have been playing the cello for years.' },
        { role: 'assistant', content: 'Lovely instrument!' },
      ],
      agentId: 'music',
      userId: 'ivy',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ failures: 0, decisions: [{ event: 'ADD', status: 'applied', fact: 'The user plays the cello.' }] });
    const listed = await call(appWith(ctx), 'GET', '/v1/memories?agentId=music&userId=ivy');
    expect(listed.body.items).toMatchObject([{ content: 'The user plays the cello.', tags: ['extracted', 'profile'], userId: 'ivy' }]);
    // No turn to name, but the user's words all the same: offsets into the user message they are in.
    expect(listed.body.items[0].sources).toMatchObject([
      { actor: 'extraction', conversationId: null, turn: null, quote: { text: 'playing the cello', start: 12, end: 29 } },
    ]);
    const again = await call(appWith(ctx), 'POST', '/v1/memories/extract', {
      messages: [{ role: 'user', content: 'Cello, still.' }],
      agentId: 'music',
      userId: 'ivy',
    });
    expect(again.body.decisions[0]).toMatchObject({ status: 'skipped' });
  });

  it('refuses bad input naming the field, and answers 503 without an LLM', async () => {
    const bad = await call(appWith(ctx), 'POST', '/v1/memories/extract', { messages: [{ role: 'system', content: 'x' }] });
    expect(bad).toMatchObject({ status: 400, body: { error: { details: [{ path: 'messages.0.role' }] } } });
    expect((await call(appWith(ctx), 'POST', '/v1/memories/extract', { messages: [] })).status).toBe(400);
    const none = await call(createApp(plain), 'POST', '/v1/memories/extract', { messages: [{ role: 'user', content: 'I live in Oslo.' }] });
    expect(none).toMatchObject({ status: 503, body: { error: { code: 'llm_not_configured' } } });
  });

  it('extracts after a chat turn as a job, without holding the reply', async () => {
    releaseFacts = () => {};
    const requestsBefore = llm.requests.length;
    const jobsBefore = await extractionJobIds(appWith(ctx));
    const message = 'Guess what: we just moved to  Gdansk!';
    const res = await call(appWith(ctx), 'POST', '/v1/chat', { message, agentId: 'home', userId: 'jo' });
    expect(res.status).toBe(200);
    // The fact request takes 1.5 s: had the reply waited for it, the memory would be there already.
    expect(await call(appWith(ctx), 'GET', '/v1/memories?agentId=home&userId=jo').then((r) => r.body.items)).toEqual([]);
    const job = await extractionOf(appWith(ctx), res.body.conversationId, jobsBefore);
    releaseFacts = undefined;
    expect(job).toMatchObject({ kind: 'extraction', status: 'succeeded', attempt: 1, result: { facts: 1, applied: 1 } });
    const listed = await call(appWith(ctx), 'GET', '/v1/memories?agentId=home&userId=jo');
    expect(listed.body.items).toMatchObject([
      { content: 'The user lives in Gdansk.', metadata: { source: 'extraction', conversationId: res.body.conversationId, turn: 1 } },
    ]);
    // Its origin: the turn, and the user's own words (the model's quote found despite its case and spacing).
    const [source] = listed.body.items[0].sources;
    expect(source).toMatchObject({ actor: 'extraction', conversationId: res.body.conversationId, turn: 1, quote: { text: 'we just moved to  Gdansk' } });
    expect(message.slice(source.quote.start, source.quote.end)).toBe(source.quote.text);
    const key = listed.body.items[0].key;
    const history = await call(appWith(ctx), 'GET', `/v1/memories/${key}/history?agentId=home&userId=jo`);
    expect(history.body.events[0].actor).toEqual({ type: 'extraction', conversationId: res.body.conversationId, turn: 1 });
    expect(llm.requests.slice(requestsBefore).filter(isFacts)).toHaveLength(1);
    const metrics = await (await appWith(ctx).request('/metrics')).text();
    expect(metrics).toMatch(/memrag_memory_extraction_decisions_total\{event="ADD",status="applied"\} [1-9]/);
    // The fact is a key of the turn it came from: a question in its words finds the turn.
    const found = await call(appWith(ctx), 'POST', '/v1/turns/search', { query: 'Where does the user live?', agentId: 'home', userId: 'jo', mode: 'text' });
    expect(found.body.hits).toMatchObject([{ conversationId: res.body.conversationId, turn: 1, question: message }]);
  });

  it("quotes the user's sentence closest to the fact when the model gives no quote, and keeps the valid time it names", async () => {
    const jobsBefore = await extractionJobIds(appWith(ctx));
    const message = 'Hello again. I have worked in Riga since 2021, at the port. The weather is grim.';
    const res = await call(appWith(ctx), 'POST', '/v1/chat', { message, agentId: 'home', userId: 'rita' });
    expect(res.status).toBe(200);
    expect(await extractionOf(appWith(ctx), res.body.conversationId, jobsBefore)).toMatchObject({ status: 'succeeded' });
    const [memory] = (await call(appWith(ctx), 'GET', '/v1/memories?agentId=home&userId=rita')).body.items;
    expect(memory).toMatchObject({ content: 'The user has worked in Riga since 2021.', validFrom: '2021-01-01T00:00:00.000Z', validUntil: null });
    expect(memory.sources[0]).toMatchObject({
      conversationId: res.body.conversationId,
      turn: 1,
      quote: { text: 'I have worked in Riga since 2021, at the port.' },
    });
    expect(message.slice(memory.sources[0].quote.start, memory.sources[0].quote.end)).toBe(memory.sources[0].quote.text);
  });

  it('does not extract with MEMORY_EXTRACTION=off', async () => {
    const before = llm.requests.filter(isFacts).length;
    const res = await call(appWith(plain), 'POST', '/v1/chat', { message: 'We just moved to Gdansk!', agentId: 'home', userId: 'kim' });
    expect(res.status).toBe(200);
    await plain.backgroundTasks.whenIdle();
    expect(llm.requests.filter(isFacts)).toHaveLength(before);
    const found = await call(appWith(plain), 'POST', '/v1/turns/search', { query: 'Where does the user live?', agentId: 'home', userId: 'kim', mode: 'text' });
    expect(found.body.hits).toEqual([]);
  });
});
