import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import type { AppContext } from '../../src/app-context.js';
import { FACT_EXTRACTION_INSTRUCTIONS, MEMORY_DECISION_INSTRUCTIONS } from '../../src/memory/extraction/extraction-prompts.js';
import { type ScriptedLlmServer, type ScriptedRequest, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { call, createApp, createTestContext } from './http-test-context.js';

const isFacts = (r: ScriptedRequest) => r.body.messages[0]?.content === FACT_EXTRACTION_INSTRUCTIONS;
const isDecision = (r: ScriptedRequest) => r.body.messages[0]?.content === MEMORY_DECISION_INSTRUCTIONS;

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
        const fact = text.includes('Gdansk') ? 'The user lives in Gdansk.' : 'The user plays the cello.';
        return reply.text(JSON.stringify({ facts: [{ content: fact, tags: ['profile'] }] }), { delayMs: releaseFacts ? 1_500 : 0 });
      }
      if (isDecision(request)) return reply.text('{"decisions":[{"fact":0,"event":"ADD"}]}');
      return reply.text('Nice, noted.');
    });
    ctx = await createTestContext({ MEMORY_EXTRACTION: 'on' });
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

  it('extracts after a chat turn in the background, without holding the reply', async () => {
    releaseFacts = () => {};
    const requestsBefore = llm.requests.length;
    const res = await call(appWith(ctx), 'POST', '/v1/chat', { message: 'We just moved to Gdansk!', agentId: 'home', userId: 'jo' });
    expect(res.status).toBe(200);
    // The fact request takes 1.5 s: had the reply waited for it, the memory would be there already.
    expect(await call(appWith(ctx), 'GET', '/v1/memories?agentId=home&userId=jo').then((r) => r.body.items)).toEqual([]);
    await ctx.backgroundTasks.whenIdle();
    releaseFacts = undefined;
    const listed = await call(appWith(ctx), 'GET', '/v1/memories?agentId=home&userId=jo');
    expect(listed.body.items).toMatchObject([
      { content: 'The user lives in Gdansk.', metadata: { source: 'extraction', conversationId: res.body.conversationId, turn: 1 } },
    ]);
    const key = listed.body.items[0].key;
    const history = await call(appWith(ctx), 'GET', `/v1/memories/${key}/history?agentId=home&userId=jo`);
    expect(history.body.events[0].actor).toEqual({ type: 'extraction', conversationId: res.body.conversationId, turn: 1 });
    expect(llm.requests.slice(requestsBefore).filter(isFacts)).toHaveLength(1);
    const metrics = await (await appWith(ctx).request('/metrics')).text();
    expect(metrics).toMatch(/memrag_memory_extraction_decisions_total\{event="ADD",status="applied"\} [1-9]/);
    // The fact is a key of the turn it came from: a question in its words finds the turn.
    const found = await call(appWith(ctx), 'POST', '/v1/turns/search', { query: 'Where does the user live?', agentId: 'home', userId: 'jo', mode: 'text' });
    expect(found.body.hits).toMatchObject([{ conversationId: res.body.conversationId, turn: 1, question: 'We just moved to Gdansk!' }]);
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
