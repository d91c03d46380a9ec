import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import type { AppContext } from '../../src/app-context.js';
import { type ScriptedLlmServer, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { call, createApp, createTestContext } from './http-test-context.js';

let ctx: AppContext;
let server: ScriptedLlmServer | undefined;

beforeAll(async () => {
  ctx = await createTestContext();
  await ctx.memories.forTenant('default').save({ key: 'tea', content: 'Alice prefers green tea in the afternoon', agentId: 'alice' });
});
afterAll(async () => {
  await ctx?.close();
});
afterEach(async () => {
  await ctx.backgroundTasks.whenIdle();
  await server?.close();
  server = undefined;
});

/** Without an LLM the chat answers extractively, and still stores the conversation. */
const plainApp = () => createApp({ ...ctx, llm: undefined });

async function converse(agentId: string, messages: string[]): Promise<string> {
  const app = plainApp();
  let conversationId: string | undefined;
  for (const message of messages) {
    const res = await call(app, 'POST', '/v1/chat', { message, agentId, ...(conversationId ? { conversationId } : {}) });
    expect(res.status).toBe(200);
    conversationId = res.body.conversationId;
  }
  await ctx.backgroundTasks.whenIdle();
  return conversationId!;
}

describe('conversations', () => {
  it('stores each turn and returns the conversation with its checkpoints and token estimate', async () => {
    const id = await converse('alice', ['What tea does Alice like?', 'And when does she drink it?']);
    const res = await call(plainApp(), 'GET', `/v1/conversations/${id}?agentId=alice`);
    expect(res.status).toBe(200);
    expect(res.body.conversation).toMatchObject({ id, agentId: 'alice', title: 'What tea does Alice like?', turnCount: 2, messageCount: 4 });
    expect(res.body.messages.map((m: { role: string; turn: number; seq: number }) => [m.seq, m.turn, m.role])).toEqual([
      [1, 1, 'user'],
      [2, 1, 'assistant'],
      [3, 2, 'user'],
      [4, 2, 'assistant'],
    ]);
    expect(res.body.messages[1].metadata.citations).toEqual([expect.objectContaining({ kind: 'memory', key: 'tea' })]);
    expect(res.body.checkpoints.map((c: { turn: number; source: string }) => [c.turn, c.source])).toEqual([
      [1, 'rules'],
      [2, 'rules'],
    ]);
    expect(res.body.checkpoints[0]).toMatchObject({ firstSeq: 1, lastSeq: 2, question: 'What tea does Alice like?' });
    expect(res.body.summary).toBeNull();
    expect(res.body.tokens).toMatchObject({ contextWindow: 8192, outputReserve: 1024, limit: Math.floor((8192 - 1024) * 0.85) });
    expect(res.body.tokens.history).toBeGreaterThan(0);
    expect(res.body.tokens.compacted).toBe(res.body.tokens.history);
    // Answered without a model, nothing was measured: the next request is estimated from the
    // default agent's system prompt, its tools (recall_turns among them) and a question with sources.
    expect(res.body.tokens.fixedMeasured).toBe(false);
    expect(res.body.tokens.fixed).toBeGreaterThan(1_000);
    expect(res.body.tokens.nextRequest).toBe(res.body.tokens.fixed + res.body.tokens.compacted);
  });

  it('continues a conversation: the next turn sends the stored history to the model', async () => {
    const chatReplies = [
      reply.toolCalls([{ id: 's1', name: 'search_memories', arguments: '{"query":"tea"}' }]),
      reply.text('Green tea [1].'),
      reply.text('In the afternoon.'),
    ];
    // Checkpoint requests (no tools) are told off with a 500: they fall back to the rules, which is fine here.
    server = await startScriptedLlmServer((request) => (request.body.tools ? chatReplies.shift()! : reply.error(500)));
    const llm = createLlmProvider({ baseURL: server.url, apiKey: 'k', model: 'test-model', retry: { maxAttempts: 1 } });
    const app = createApp({ ...ctx, llm });
    const first = await call(app, 'POST', '/v1/chat', { message: 'What tea does Alice like?', agentId: 'bob' });
    await ctx.backgroundTasks.whenIdle();
    const second = await call(app, 'POST', '/v1/chat', { message: 'When?', agentId: 'bob', conversationId: first.body.conversationId });
    expect(second.status).toBe(200);
    expect(second.body.conversationId).toBe(first.body.conversationId);
    const chats = server.requests.filter((r) => r.body.tools);
    const sent = chats.at(-1)!.body.messages.map((m) => m.role);
    // system, turn 1 (question, tool call, result, answer), then the new question.
    expect(sent).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    // Stored without the sources block: the question as the user wrote it.
    expect(chats.at(-1)!.body.messages[1]!.content).toBe('What tea does Alice like?');
    expect(String(chats.at(-1)!.body.messages[5]!.content)).toContain('<sources>');
    const stored = await call(app, 'GET', `/v1/conversations/${first.body.conversationId}?agentId=bob`);
    expect(stored.body.messages[1]).toMatchObject({ role: 'assistant', content: null, toolCalls: [{ id: 's1', name: 'search_memories' }] });
    expect(stored.body.messages[2]).toMatchObject({ role: 'tool', toolCallId: 's1', isError: false });
  });

  it('keeps conversations to their agent', async () => {
    const id = await converse('carol', ['What tea does Alice like?']);
    const app = plainApp();
    expect((await call(app, 'GET', `/v1/conversations/${id}?agentId=mallory`)).status).toBe(404);
    expect((await call(app, 'GET', `/v1/conversations/${id}`)).status).toBe(404);
    expect((await call(app, 'GET', `/v1/conversations/${id}/export?agentId=mallory`)).status).toBe(404);
    expect((await call(app, 'DELETE', `/v1/conversations/${id}?agentId=mallory`)).status).toBe(404);
    const hijack = await call(app, 'POST', '/v1/chat', { message: 'hello', agentId: 'mallory', conversationId: id });
    expect(hijack.status).toBe(404);
    expect(hijack.body.error).toMatchObject({ code: 'not_found', message: expect.stringContaining(id) });
    const streamed = await call(app, 'POST', '/v1/chat', { message: 'hello', agentId: 'mallory', conversationId: id, stream: true });
    expect(streamed.status).toBe(404);
    expect((await call(app, 'GET', `/v1/conversations/${id}?agentId=carol`)).body.conversation.turnCount).toBe(1);
  });

  it('lists an agent’s conversations by pages, and deletes one', async () => {
    const ids = [await converse('dora', ['one']), await converse('dora', ['two']), await converse('dora', ['three'])];
    const app = plainApp();
    const first = await call(app, 'GET', '/v1/conversations?agentId=dora&limit=2');
    expect(first.status).toBe(200);
    expect(first.body.items.map((c: { title: string }) => c.title)).toEqual(['three', 'two']);
    const second = await call(app, 'GET', `/v1/conversations?agentId=dora&limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ items: [{ id: ids[0], title: 'one' }], nextCursor: null });

    expect((await call(app, 'DELETE', `/v1/conversations/${ids[1]}?agentId=dora`)).status).toBe(204);
    expect((await call(app, 'GET', `/v1/conversations/${ids[1]}?agentId=dora`)).status).toBe(404);
    expect((await call(app, 'DELETE', `/v1/conversations/${ids[1]}?agentId=dora`)).status).toBe(404);
    expect((await call(app, 'GET', '/v1/conversations?agentId=dora')).body.items).toHaveLength(2);
  });

  it('exports a conversation and imports it back under a new id', async () => {
    const id = await converse('erin', ['What tea does Alice like?', 'Thanks']);
    const app = plainApp();
    const exported = await call(app, 'GET', `/v1/conversations/${id}/export?agentId=erin`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-disposition')).toContain(`conversation-${id}.json`);
    expect(exported.body).toMatchObject({ format: 'memrag.conversation', version: 1, conversation: { id, agentId: 'erin' } });
    expect(exported.body.messages).toHaveLength(4);
    expect(exported.body.checkpoints).toHaveLength(2);

    const imported = await call(app, 'POST', '/v1/conversations/import?agentId=frank', exported.body);
    expect(imported.status).toBe(201);
    expect(imported.body).toMatchObject({ importedFrom: id, conversation: { agentId: 'frank', turnCount: 2, messageCount: 4 } });
    const newId = imported.body.conversation.id;
    expect(newId).not.toBe(id);
    expect(imported.headers.get('location')).toBe(`/v1/conversations/${newId}?agentId=frank`);
    const again = await call(app, 'GET', `/v1/conversations/${newId}/export?agentId=frank`);
    expect(again.body.messages).toEqual(exported.body.messages);
    expect(again.body.checkpoints).toEqual(exported.body.checkpoints);

    // Without ?agentId the conversation goes back to the agent it was exported from.
    const home = await call(app, 'POST', '/v1/conversations/import', exported.body);
    expect(home.body.conversation.agentId).toBe('erin');
    // And it can be continued.
    const next = await call(app, 'POST', '/v1/chat', { message: 'More?', agentId: 'frank', conversationId: newId });
    expect(next.status).toBe(200);
    await ctx.backgroundTasks.whenIdle();
    expect((await call(app, 'GET', `/v1/conversations/${newId}?agentId=frank`)).body.conversation.turnCount).toBe(3);
  });

  it('refuses an import that is not a history a turn could continue, naming the field', async () => {
    const app = plainApp();
    const renumber = (messages: Array<Record<string, unknown>>) => messages.map((m, i) => ({ ...m, seq: i + 1 }));
    const base = {
      format: 'memrag.conversation',
      version: 1,
      conversation: { id: randomUUID(), agentId: 'gina', title: 't', createdAt: '2025-01-01T00:00:00.000Z', updatedAt: '2025-01-01T00:00:00.000Z' },
      messages: [
        { seq: 1, turn: 1, role: 'user', content: 'hi' },
        { seq: 2, turn: 1, role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'search_memories', arguments: '{}' }] },
        { seq: 3, turn: 1, role: 'tool', toolCallId: 'c1', content: 'result' },
        { seq: 4, turn: 1, role: 'assistant', content: 'done' },
      ],
      checkpoints: [],
      summary: null,
    };
    const cases: Array<[unknown, string]> = [
      [{ ...base, messages: base.messages.map((m, i) => (i === 1 ? { ...m, seq: 7 } : m)) }, 'messages.1.seq'],
      [{ ...base, messages: renumber(base.messages.filter((_, i) => i !== 2)) }, 'messages.1.toolCalls'],
      [{ ...base, messages: base.messages.map((m, i) => (i === 2 ? { ...m, toolCallId: 'other' } : m)) }, 'messages.2.toolCallId'],
      [{ ...base, messages: [...base.messages, { seq: 5, turn: 2, role: 'assistant', content: 'x' }] }, 'messages.4.role'],
      [{ ...base, messages: [...base.messages, { seq: 5, turn: 4, role: 'user', content: 'x' }] }, 'messages.4.turn'],
      // The assistant's opening is a turn of its own: the user's first message starts the next.
      [{ ...base, messages: renumber([{ turn: 1, role: 'assistant', content: 'Hello!' }, ...base.messages]) }, 'messages.1.turn'],
      [{ ...base, messages: renumber([{ turn: 1, role: 'tool', toolCallId: 'c0', content: 'x' }, ...base.messages]) }, 'messages.0.role'],
      [{ ...base, messages: [{ ...base.messages[0], content: 'nul \u0000' }, ...base.messages.slice(1)] }, 'messages.0.content'],
      [
        { ...base, checkpoints: [{ turn: 2, firstSeq: 1, lastSeq: 4, question: 'q', summary: 's', actionableSummary: 'a', source: 'llm' }] },
        'checkpoints.0.turn',
      ],
      [
        { ...base, checkpoints: [{ turn: 1, firstSeq: 1, lastSeq: 3, question: 'q', summary: 's', actionableSummary: 'a', source: 'llm' }] },
        'checkpoints.0.firstSeq',
      ],
      [
        { ...base, summary: { fromTurn: 1, throughTurn: 3, layers: [{ level: 'brief', fromTurn: 1, throughTurn: 3, text: 's', source: 'llm' }] } },
        'summary.throughTurn',
      ],
      [{ ...base, extra: true }, 'extra'],
      [{ ...base, format: 'other' }, 'format'],
    ];
    for (const [body, path] of cases) {
      const res = await call(app, 'POST', '/v1/conversations/import', body);
      expect(res.status, path).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(
        res.body.error.details.map((d: { path: string }) => d.path),
        JSON.stringify(res.body.error),
      ).toContain(path);
    }
    expect((await call(app, 'GET', '/v1/conversations?agentId=gina')).body.items).toEqual([]);
    expect((await call(app, 'POST', '/v1/conversations/import', base)).status).toBe(201);
  });

  it('imports a conversation the assistant opened, recalls what the opening said, and continues it', async () => {
    const app = plainApp();
    const at = '2025-03-01T09:00:00.000Z';
    const body = {
      format: 'memrag.conversation',
      version: 1,
      conversation: { id: randomUUID(), agentId: 'hana', title: 'welcome', createdAt: at, updatedAt: at },
      messages: [
        { seq: 1, turn: 1, role: 'assistant', content: 'Welcome back! Your tortoise Quillon is due for a shell check on Friday.', createdAt: at },
        { seq: 2, turn: 2, role: 'user', content: 'Thanks, what should I bring?', createdAt: at },
        { seq: 3, turn: 2, role: 'assistant', content: 'Its vaccination card.', createdAt: at },
      ],
      checkpoints: [],
      summary: null,
    };
    const imported = await call(app, 'POST', '/v1/conversations/import', body);
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    const id = imported.body.conversation.id;
    expect(imported.body.conversation).toMatchObject({ turnCount: 2, messageCount: 3 });
    expect((await call(app, 'GET', `/v1/conversations/${id}/export?agentId=hana`)).body.messages).toEqual(
      body.messages.map((m) => ({ ...m, ...(m.role === 'assistant' ? { toolCalls: [] } : {}), metadata: {} })),
    );

    for (const mode of ['text', 'vector', 'hybrid']) {
      const found = await call(app, 'POST', '/v1/turns/search', { query: 'When is Quillon the tortoise due for a shell check?', agentId: 'hana', mode });
      expect(found.status).toBe(200);
      expect(found.body.hits[0], mode).toMatchObject({ conversationId: id, turn: 1, question: '', answer: body.messages[0]!.content, at });
    }

    const next = await call(app, 'POST', '/v1/chat', { message: 'And on what day?', agentId: 'hana', conversationId: id });
    expect(next.status).toBe(200);
    await ctx.backgroundTasks.whenIdle();
    expect((await call(app, 'GET', `/v1/conversations/${id}?agentId=hana`)).body.conversation.turnCount).toBe(3);
  });

  it('validates ids, pages and cursors', async () => {
    const app = plainApp();
    const badId = await call(app, 'GET', '/v1/conversations/not-a-uuid');
    expect(badId.status).toBe(400);
    expect(badId.body.error.details[0].path).toBe('id');
    expect((await call(app, 'GET', '/v1/conversations?limit=0')).body.error.details[0].path).toBe('limit');
    expect((await call(app, 'GET', '/v1/conversations?cursor=abc')).body.error.details[0].path).toBe('cursor');
    expect((await call(app, 'GET', '/v1/conversations?agentid=x')).body.error.details[0].path).toBe('agentid');
    expect((await call(app, 'GET', `/v1/conversations/${randomUUID()}`)).status).toBe(404);
  });
});
