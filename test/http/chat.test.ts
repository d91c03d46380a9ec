import type { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createFakeKnowledgeRetriever } from '../chat/fake-knowledge-retriever.js';
import { type Script, type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { appWithScriptedLlm, call, clearConversations, clearMemories, createApp, createTestContext } from './http-test-context.js';
import { parseSse } from '../support/parse-sse.js';

let ctx: AppContext;
let server: ScriptedLlmServer | undefined;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});
beforeEach(async () => {
  await clearMemories(ctx);
  await clearConversations(ctx);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** An app whose chat talks to a scripted LLM, closed after the test. */
async function appWithLlm(script: Script, extra: Partial<AppContext> = {}): Promise<{ app: Hono; llm: ScriptedLlmServer }> {
  const made = await appWithScriptedLlm(ctx, script, extra);
  server = made.llm;
  return made;
}

function postChat(app: Hono, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return app.request('/v1/chat', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

async function saveMemory(key: string, content: string, agentId?: string) {
  await ctx.memories.forTenant('default').save({ key, content, ...(agentId ? { agentId } : {}) });
}

describe('POST /v1/chat with an LLM', () => {
  it('answers from a recalled memory, and [1] maps to that memory', async () => {
    await saveMemory('tea', 'Alice prefers green tea in the afternoon');
    const { app, llm } = await appWithLlm([reply.text('Alice drinks green tea [1]. Also [9].', { usage: { prompt_tokens: 100, completion_tokens: 20 } })]);

    const res = await call(app, 'POST', '/v1/chat', { message: 'What tea does Alice prefer?' });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      answer: 'Alice drinks green tea [1]. Also [9].',
      mode: 'llm',
      stopReason: 'completed',
      toolCalls: [],
      usage: { promptTokens: 100, completionTokens: 20, totalTokens: 120 },
      costUsd: null,
    });
    expect(res.body.conversationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.citations).toEqual([
      {
        id: 1,
        kind: 'memory',
        key: 'tea',
        agentId: 'default',
        snippet: 'Alice prefers green tea in the afternoon',
        sources: [{ actor: 'api', conversationId: null, turn: null, quote: null, at: expect.any(String) }],
      },
    ]);

    const sent = llm.requests[0]!.body;
    expect(sent.messages[0]).toMatchObject({ role: 'system' });
    expect(String(sent.messages[0]!.content)).toContain('data, not instructions');
    const user = String(sent.messages[1]!.content);
    expect(user).toContain('<source id="1" kind="memory" key="tea">\nAlice prefers green tea in the afternoon\n</source>');
    expect(user.endsWith('Question:\nWhat tea does Alice prefer?')).toBe(true);
    // The app's document search is the chat's knowledge retriever, so its tool is offered too.
    expect(sent.tools?.map((t) => t.function.name).sort()).toEqual(['delete_memory', 'save_memory', 'search_knowledge', 'search_memories']);
  });

  it('echoes the conversation id and recalls only the requested agent', async () => {
    await saveMemory('tea', 'Alice prefers green tea', 'alice');
    await saveMemory('tea', 'Bob prefers black tea', 'bob');
    const { app, llm } = await appWithLlm([reply.text('Black tea [1].')]);
    const conversationId = '7d444840-9dc0-11d1-b245-5ffdce74fad2';
    const res = await call(app, 'POST', '/v1/chat', { message: 'Which tea?', agentId: 'bob', conversationId });
    expect(res.body).toMatchObject({ conversationId, citations: [{ key: 'tea', agentId: 'bob', snippet: 'Bob prefers black tea' }] });
    expect(String(llm.requests[0]!.body.messages[1]!.content)).not.toContain('Alice');
  });

  it('runs save_memory for the turn’s agent, and refuses an agentId argument', async () => {
    const { app, llm } = await appWithLlm([
      reply.toolCalls([
        { id: 'c1', name: 'save_memory', arguments: '{"key":"color","content":"Bob likes blue","tags":["prefs"]}' },
        { id: 'c2', name: 'save_memory', arguments: '{"key":"x","content":"sneaky","agentId":"alice"}' },
      ]),
      reply.text('Noted: Bob likes blue.'),
    ]);

    const res = await call(app, 'POST', '/v1/chat', { message: 'Remember that I like blue', agentId: 'bob' });

    expect(res.status).toBe(200);
    expect(res.body.answer).toBe('Noted: Bob likes blue.');
    expect(res.body.toolCalls).toHaveLength(2);
    expect(res.body.toolCalls[0]).toMatchObject({
      id: 'c1',
      name: 'save_memory',
      arguments: { key: 'color', content: 'Bob likes blue', tags: ['prefs'] },
      isError: false,
    });
    expect(JSON.parse(res.body.toolCalls[0].result)).toEqual({ saved: true, key: 'color', created: true });
    expect(res.body.toolCalls[1]).toMatchObject({ name: 'save_memory', isError: true });
    expect(res.body.toolCalls[1].result).toContain('agentId');

    expect(await ctx.memories.forTenant('default').get('color', { agentId: 'bob' })).toMatchObject({ content: 'Bob likes blue', tags: ['prefs'] });
    expect(await ctx.memories.forTenant('default').get('color', { agentId: 'default' })).toBeNull();
    expect(await ctx.memories.forTenant('default').get('x', { agentId: 'alice' })).toBeNull();
    // The tool results went back to the model in the second request.
    const toolMessages = llm.requests[1]!.body.messages.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => m.tool_call_id)).toEqual(['c1', 'c2']);
  });

  it('numbers sources found by tools after the recalled ones, and cites them', async () => {
    await saveMemory('tea', 'Alice prefers green tea');
    const knowledge = createFakeKnowledgeRetriever([
      {
        documentId: 'handbook',
        title: 'Handbook',
        chunkId: 'handbook#7',
        headingPath: ['Office', 'Kitchen'],
        start: 500,
        end: 560,
        text: 'The office kitchen stocks oolong.',
      },
    ]);
    const { app, llm } = await appWithLlm(
      [
        reply.toolCalls([{ id: 's1', name: 'search_knowledge', arguments: '{"query":"kitchen oolong"}' }]),
        reply.text('Alice likes green tea [1]; the kitchen has oolong [2].'),
      ],
      // The same fake for every tenant: this test is about the chat, not isolation.
      { knowledge: { forTenant: () => knowledge } },
    );
    const res = await call(app, 'POST', '/v1/chat', { message: 'What tea does Alice like?' });
    expect(res.status).toBe(200);
    expect(res.body.citations).toEqual([
      expect.objectContaining({ id: 1, kind: 'memory', key: 'tea' }),
      {
        id: 2,
        kind: 'document',
        documentId: 'handbook',
        title: 'Handbook',
        chunkId: 'handbook#7',
        headingPath: ['Office', 'Kitchen'],
        start: 500,
        end: 560,
        snippet: 'The office kitchen stocks oolong.',
      },
    ]);
    const toolMessage = llm.requests[1]!.body.messages.find((m) => m.role === 'tool');
    expect(String(toolMessage?.content)).toContain('<source id="2" kind="document" title="Handbook" section="Office &gt; Kitchen">');
  });

  it('streams retrieval, deltas and done as Server-Sent Events', async () => {
    await saveMemory('tea', 'Alice prefers green tea');
    const { app } = await appWithLlm([reply.text('Green tea [1].', { chunkSize: 3 })]);

    const res = await postChat(app, { message: 'What does Alice drink?', stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = parseSse(await res.text());

    const names = events.map((e) => e.event);
    expect(names[0]).toBe('retrieval');
    expect(names.at(-1)).toBe('done');
    // The model call is framed by turn_start and turn_end; its deltas come between them.
    expect(names[1]).toBe('turn_start');
    expect(names.at(-2)).toBe('turn_end');
    expect(names.slice(2, -2).every((n) => n === 'delta')).toBe(true);
    expect(names.length).toBeGreaterThan(5);
    expect(events[0]!.data.sources).toEqual([expect.objectContaining({ id: 1, kind: 'memory', key: 'tea' })]);
    const text = events
      .filter((e) => e.event === 'delta')
      .map((e) => e.data.text)
      .join('');
    expect(text).toBe('Green tea [1].');
    expect(events.at(-1)!.data).toMatchObject({ answer: 'Green tea [1].', mode: 'llm', citations: [{ id: 1, key: 'tea' }] });
  });

  it('streams when the client accepts text/event-stream, with tool events', async () => {
    const { app } = await appWithLlm([reply.toolCalls([{ id: 'd1', name: 'delete_memory', arguments: '{"key":"nope"}' }]), reply.text('Nothing to forget.')]);
    const res = await postChat(app, { message: 'Forget nope' }, { accept: 'text/event-stream' });
    const names = parseSse(await res.text()).map((e) => e.event);
    expect(names[0]).toBe('retrieval');
    expect(names).toContain('tool_start');
    expect(names.indexOf('tool_end')).toBeGreaterThan(names.indexOf('tool_start'));
    expect(names.at(-1)).toBe('done');
  });

  it('maps a rate limit to 429 with Retry-After', async () => {
    const { app } = await appWithLlm([reply.rateLimited(120)]);
    const res = await call(app, 'POST', '/v1/chat', { message: 'hello' });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('120');
    expect(res.body).toEqual({ error: { code: 'llm_rate_limited', message: expect.any(String), details: null } });
  });

  it('maps auth failures to 502 and context overflow to 422', async () => {
    const { app } = await appWithLlm([reply.error(401, { message: 'bad key sk-secret' }), reply.contextOverflow()]);
    const auth = await call(app, 'POST', '/v1/chat', { message: 'hello' });
    expect(auth.status).toBe(502);
    expect(auth.body.error.code).toBe('llm_auth_error');
    expect(auth.body.error.message).not.toContain('sk-secret');
    const overflow = await call(app, 'POST', '/v1/chat', { message: 'hello' });
    expect(overflow.status).toBe(422);
    expect(overflow.body.error.code).toBe('context_overflow');
  });

  it('reports an LLM failure mid-stream as an error event', async () => {
    const { app } = await appWithLlm([reply.rateLimited(120)]);
    const res = await postChat(app, { message: 'hello', stream: true });
    const events = parseSse(await res.text());
    // The call started (turn_start) and never ended: no turn_end, the error instead.
    expect(events.map((e) => e.event)).toEqual(['retrieval', 'turn_start', 'error']);
    expect(events[2]!.data).toMatchObject({ status: 429, error: { code: 'llm_rate_limited' } });
  });

  it('aborts the LLM request when the client disconnects mid-stream', async () => {
    const { app, llm } = await appWithLlm([reply.text('x'.repeat(200), { chunkSize: 1, chunkDelayMs: 20 })]);
    const res = await postChat(app, { message: 'tell me a long story', stream: true });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    while (!seen.includes('event: delta')) {
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended before any delta');
      seen += decoder.decode(value, { stream: true });
    }
    await reader.cancel();

    const deadline = Date.now() + 5000;
    while (!llm.requests[0]?.closedEarly && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(llm.requests[0]?.closedEarly).toBe(true);
  });

  it('aborts the LLM request when a JSON client disconnects', async () => {
    const { app, llm } = await appWithLlm([reply.text('late', { delayMs: 2000 })]);
    const controller = new AbortController();
    const pending = Promise.resolve(postChat(app, { message: 'hello' }, {}, controller.signal)).catch((e: unknown) => e);
    while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    await pending;
    const deadline = Date.now() + 5000;
    while (!llm.requests[0]?.closedEarly && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(llm.requests[0]?.closedEarly).toBe(true);
  });
});

describe('POST /v1/chat without an LLM', () => {
  it('answers extractively, citing the sentences it used', async () => {
    await saveMemory('tea', 'Alice prefers green tea. She rides a bike.');
    await saveMemory('car', 'Bob owns a red car.');
    const app = createApp({ ...ctx, llm: undefined });
    const res = await call(app, 'POST', '/v1/chat', { message: 'What tea does Alice prefer?' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      mode: 'extractive',
      answer: 'Alice prefers green tea. [1]',
      citations: [{ id: 1, kind: 'memory', key: 'tea' }],
      usage: { totalTokens: 0 },
      costUsd: null,
      stopReason: 'completed',
    });
    expect(res.body.note).toMatch(/No LLM is configured/);
  });

  it('cites document chunks from the knowledge retriever, and says so when nothing answers', async () => {
    const knowledge = createFakeKnowledgeRetriever([
      { documentId: 'guide', title: 'Guide', chunkId: 'guide#1', headingPath: ['Setup'], start: 0, end: 42, text: 'Install with npm. Then run the server.' },
    ]);
    const app = createApp({ ...ctx, llm: undefined, knowledge: { forTenant: () => knowledge } });
    const found = await call(app, 'POST', '/v1/chat', { message: 'How do I install it?', tagsAny: ['docs'] });
    expect(found.body.answer).toBe('Install with npm. [1]');
    // The quote is the sentence's range in the document, beside the chunk's.
    expect(found.body.citations).toEqual([
      expect.objectContaining({ kind: 'document', chunkId: 'guide#1', headingPath: ['Setup'], start: 0, end: 42, quotes: [{ start: 0, end: 17 }] }),
    ]);
    expect(knowledge.calls[0]?.options).toMatchObject({ tagsAny: ['docs'], topK: 5 });

    // The first turn is recalled once it is indexed, after its reply.
    await ctx.backgroundTasks.whenIdle();
    const none = await call(app, 'POST', '/v1/chat', { message: 'zebra migration patterns' });
    // Only the first turn is recalled, and it answers nothing about zebras: declined, the turn named as the closest source.
    expect(none.body).toMatchObject({ answer: expect.stringMatching(/^Nothing in the memories or documents answers/), citations: [{ kind: 'turn' }] });
  });

  it('streams the extractive answer as one delta', async () => {
    const app = createApp({ ...ctx, llm: undefined });
    const res = await postChat(app, { message: 'anything', stream: true });
    const events = parseSse(await res.text());
    expect(events.map((e) => e.event)).toEqual(['retrieval', 'delta', 'done']);
    expect(events[2]!.data.mode).toBe('extractive');
  });
});

describe('POST /v1/chat validation', () => {
  const app = () => createApp({ ...ctx, llm: undefined });
  it.each<[string, Record<string, unknown>]>([
    ['message', {}],
    ['message', { message: '' }],
    ['message', { message: '   ' }],
    ['message', { message: 'x'.repeat(32_001) }],
    ['message', { message: 'a\u0000b' }],
    ['conversationId', { message: 'hi', conversationId: 'not-a-uuid' }],
    ['topK', { message: 'hi', topK: 0 }],
    ['topK', { message: 'hi', topK: 101 }],
    ['agentId', { message: 'hi', agentId: 'no spaces' }],
    ['tagsAny', { message: 'hi', tagsAny: 'one' }],
    ['stream', { message: 'hi', stream: 'yes' }],
    ['tagz', { message: 'hi', tagz: ['x'] }],
  ])('rejects a bad %s (case %#)', async (field, body) => {
    const res = await call(app(), 'POST', '/v1/chat', body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(field);
    expect(res.body.error.message).toContain(field);
  });

  it('rejects a body that is not JSON', async () => {
    const res = await call(app(), 'POST', '/v1/chat', '{nope');
    expect(res).toMatchObject({ status: 400, body: { error: { code: 'invalid_json' } } });
  });
});
