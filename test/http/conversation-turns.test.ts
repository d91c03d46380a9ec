import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import type { TurnSearchOptions } from '../../src/conversations/turn-search.js';
import { call, createApp, createTestContext } from './http-test-context.js';

let ctx: AppContext;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.backgroundTasks.whenIdle();
  await ctx?.close();
});

const app = () => createApp({ ...ctx, llm: undefined });
const record = (id: string, body: unknown) => call(app(), 'POST', `/v1/conversations/${id}/turns`, body);
const paths = (res: { body: any }) => res.body.error.details.map((d: { path: string }) => d.path);

describe('POST /v1/conversations/{id}/turns', () => {
  it('stores the turn in a new conversation, then the next turns after it', async () => {
    const id = randomUUID();
    const first = await record(id, { agentId: 'recorder', userId: 'rita', user: 'Which tea does Rita like?', assistant: 'Rita likes oolong.' });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toEqual({ conversationId: id, turn: 1 });
    const second = await record(id, { agentId: 'recorder', userId: 'rita', user: 'And coffee?', assistant: 'She avoids coffee.' });
    expect(second.body).toEqual({ conversationId: id, turn: 2 });
    await ctx.backgroundTasks.whenIdle();

    const read = await call(app(), 'GET', `/v1/conversations/${id}?agentId=recorder`);
    expect(read.status).toBe(200);
    expect(read.body.conversation).toMatchObject({
      id,
      agentId: 'recorder',
      userId: 'rita',
      title: 'Which tea does Rita like?',
      turnCount: 2,
      messageCount: 4,
    });
    expect(read.body.messages.map((m: { turn: number; role: string; content: string }) => [m.turn, m.role, m.content])).toEqual([
      [1, 'user', 'Which tea does Rita like?'],
      [1, 'assistant', 'Rita likes oolong.'],
      [2, 'user', 'And coffee?'],
      [2, 'assistant', 'She avoids coffee.'],
    ]);
    expect(read.body.messages[0].metadata).toMatchObject({ recorded: true });
  });

  it("defaults to the default agent and no user, and refuses another agent's or user's conversation with a 404", async () => {
    const id = randomUUID();
    expect((await record(id, { user: 'Is the lab open on Sundays?', assistant: 'No, it is closed.' })).status).toBe(201);
    const read = await call(app(), 'GET', `/v1/conversations/${id}`);
    expect(read.body.conversation).toMatchObject({ agentId: 'default', userId: null, turnCount: 1 });

    const owned = randomUUID();
    expect((await record(owned, { agentId: 'recorder', userId: 'rita', user: 'Hello there', assistant: 'Hi Rita.' })).status).toBe(201);
    for (const body of [
      { agentId: 'recorder', userId: 'mallory', user: 'Hello there', assistant: 'Hi.' },
      { agentId: 'recorder', user: 'Hello there', assistant: 'Hi.' },
      { agentId: 'other-agent', userId: 'rita', user: 'Hello there', assistant: 'Hi.' },
    ]) {
      const res = await record(owned, body);
      expect(res.status, JSON.stringify(body)).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    await ctx.backgroundTasks.whenIdle();
    expect((await call(app(), 'GET', `/v1/conversations/${owned}?agentId=recorder`)).body.conversation.turnCount).toBe(1);
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const id = randomUUID();
    const cases: [unknown, string][] = [
      [{ assistant: 'An answer.' }, 'user'],
      [{ user: 'A question?' }, 'assistant'],
      [{ user: '   ', assistant: 'An answer.' }, 'user'],
      [{ user: 'A question?', assistant: '' }, 'assistant'],
      [{ user: 'x'.repeat(32_001), assistant: 'An answer.' }, 'user'],
      [{ user: 'A question?', assistant: 'Bad \u0000 byte' }, 'assistant'],
      [{ user: 'A question?', assistant: 'An answer.', agentId: 'no spaces allowed' }, 'agentId'],
      [{ user: 'A question?', assistant: 'An answer.', userId: '' }, 'userId'],
      [{ user: 'A question?', assistant: 'An answer.', messages: [] }, 'messages'],
      [{ user: 42, assistant: 'An answer.' }, 'user'],
    ];
    for (const [body, field] of cases) {
      const res = await record(id, body);
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(paths(res)).toContain(field);
    }
    const badId = await record('not-a-uuid', { user: 'A question?', assistant: 'An answer.' });
    expect(badId.status).toBe(400);
    expect(paths(badId)).toContain('id');
    // Nothing was stored by any of them.
    expect((await call(app(), 'GET', `/v1/conversations/${id}`)).status).toBe(404);
  });

  it("is found by the user's turn search from another conversation", async () => {
    const id = randomUUID();
    const stored = await record(id, {
      agentId: 'recall-agent',
      userId: 'quentin',
      user: 'My rescue greyhound is called Bramblewick.',
      assistant: 'Bramblewick is a lovely name for a greyhound.',
    });
    expect(stored.status).toBe(201);
    await ctx.backgroundTasks.whenIdle();

    const search = (userId: string) =>
      call(app(), 'POST', '/v1/turns/search', { query: 'What is my greyhound called?', agentId: 'recall-agent', userId, excludeConversationId: randomUUID() });
    const found = await search('quentin');
    expect(found.status).toBe(200);
    expect(found.body.hits[0]).toMatchObject({
      conversationId: id,
      turn: 1,
      question: 'My rescue greyhound is called Bramblewick.',
      answer: 'Bramblewick is a lovely name for a greyhound.',
      userId: 'quentin',
    });
    expect((await search('someone-else')).body.hits).toEqual([]);
  });

  it("recalls a new chat's past turns without excluding the id it drew, and a continued chat's without its own", async () => {
    const other = randomUUID();
    const user = { agentId: 'recall-agent', userId: 'odile' };
    expect((await record(other, { ...user, user: 'My heron is called Quillon.', assistant: 'Quillon is a fine name for a heron.' })).status).toBe(201);
    await ctx.backgroundTasks.whenIdle();
    const searches: TurnSearchOptions[] = [];
    const chatApp = createApp({
      ...ctx,
      llm: undefined,
      turns: {
        forTenant: (tenantId) => {
          const search = ctx.turns.forTenant(tenantId);
          return { ...search, search: (query, options) => (searches.push(options), search.search(query, options)) };
        },
      },
    });
    const asked = await call(chatApp, 'POST', '/v1/chat', { ...user, message: 'What is my heron called?' });
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    // Nothing is stored under the id the server drew: there is nothing to leave out, and the other conversation's turn is found.
    expect(searches[0]).not.toHaveProperty('excludeConversationId');
    expect(asked.body.citations).toContainEqual(expect.objectContaining({ kind: 'turn', conversationId: other }));
    await ctx.backgroundTasks.whenIdle();
    const again = await call(chatApp, 'POST', '/v1/chat', { ...user, conversationId: asked.body.conversationId, message: 'And its name again?' });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(searches[1]).toMatchObject({ excludeConversationId: asked.body.conversationId });
  });
});
