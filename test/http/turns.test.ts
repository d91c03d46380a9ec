import { randomUUID } from 'node:crypto';
import type { Hono } from 'hono';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { CONVERSATION_FUSION_WEIGHTS } from '../../src/conversations/conversation-ranking.js';
import { deleteConversationTurns } from '../../src/conversations/turn-index.js';
import { call, clearConversations, clearMemories, createApp, createTestContext } from './http-test-context.js';

let ctx: AppContext;
let app: Hono;

beforeAll(async () => {
  ctx = await createTestContext();
  // Without an LLM: extractive answers, turns still stored and indexed.
  app = createApp({ ...ctx, llm: undefined });
});
afterAll(async () => {
  await ctx?.close();
});
beforeEach(async () => {
  await clearMemories(ctx);
  await clearConversations(ctx);
});

/** One chat turn; returns the reply, after the turn's background work (checkpoint, turn index). */
async function chat(body: Record<string, unknown>) {
  const res = await call(app, 'POST', '/v1/chat', body);
  await ctx.backgroundTasks.whenIdle();
  return res;
}

function conversationExport(turns: { question: string; answer: string; at: string }[], extra: { agentId?: string; userId?: string } = {}) {
  return {
    format: 'memrag.conversation',
    version: 1,
    conversation: {
      id: randomUUID(),
      agentId: extra.agentId ?? 'default',
      ...(extra.userId ? { userId: extra.userId } : {}),
      title: 't',
      createdAt: turns[0]!.at,
      updatedAt: turns[0]!.at,
    },
    messages: turns.flatMap((t, i) => [
      { seq: 2 * i + 1, turn: i + 1, role: 'user', content: t.question, createdAt: t.at },
      { seq: 2 * i + 2, turn: i + 1, role: 'assistant', content: t.answer, toolCalls: [], createdAt: t.at },
    ]),
    checkpoints: [],
    summary: null,
  };
}

describe('POST /v1/turns/search', () => {
  it('finds the turns of stored and imported conversations, in each mode', async () => {
    const first = await chat({ message: 'My locker code is 4512, remember it.', agentId: 'ana' });
    expect(first.status).toBe(200);
    const imported = await call(
      app,
      'POST',
      '/v1/conversations/import?agentId=ana',
      conversationExport([{ question: 'The bike lock combination is 9931.', answer: 'Noted: 9931 for the bike.', at: '2026-05-12T09:00:00.000Z' }]),
    );
    expect(imported.status).toBe(201);
    // Searchable as soon as the import answered: no background work to wait for.
    for (const mode of ['hybrid', 'vector', 'text']) {
      const res = await call(app, 'POST', '/v1/turns/search', { query: 'bike lock combination', agentId: 'ana', mode, topK: 1 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.hits, mode).toEqual([
        {
          conversationId: imported.body.conversation.id,
          turn: 1,
          question: 'The bike lock combination is 9931.',
          answer: 'Noted: 9931 for the bike.',
          at: '2026-05-12T09:00:00.000Z',
          agentId: 'ana',
          userId: null,
          score: expect.any(Number),
          ranks:
            mode === 'hybrid'
              ? { vector: expect.any(Number), text: expect.any(Number) }
              : mode === 'vector'
                ? { vector: 1, text: null }
                : { vector: null, text: 1 },
        },
      ]);
    }
    const locker = await call(app, 'POST', '/v1/turns/search', { query: 'locker code', agentId: 'ana', mode: 'text' });
    expect(locker.body.hits.map((h: { conversationId: string }) => h.conversationId)).toEqual([first.body.conversationId]);
    const elsewhere = await call(app, 'POST', '/v1/turns/search', {
      query: 'locker code',
      agentId: 'ana',
      mode: 'text',
      excludeConversationId: first.body.conversationId,
    });
    expect(elsewhere.body.hits).toEqual([]);
    const only = await call(app, 'POST', '/v1/turns/search', { query: 'locker code bike', agentId: 'ana', conversationId: imported.body.conversation.id });
    expect(only.body.hits.map((h: { conversationId: string }) => h.conversationId)).toEqual([imported.body.conversation.id]);
    // Another agent's (the default one's) turns are its own.
    expect((await call(app, 'POST', '/v1/turns/search', { query: 'locker code bike', topK: 50 })).body.hits).toEqual([]);
  });

  it('filters by user', async () => {
    const mine = await chat({ message: 'I keep the spare key under the blue flowerpot.', agentId: 'ana', userId: 'u-1' });
    await chat({ message: 'My spare key is with the neighbour.', agentId: 'ana', userId: 'u-2' });
    const res = await call(app, 'POST', '/v1/turns/search', { query: 'spare key', agentId: 'ana', userId: 'u-1' });
    expect(res.body.hits.map((h: { conversationId: string; userId: string }) => [h.conversationId, h.userId])).toEqual([[mine.body.conversationId, 'u-1']]);
    expect((await call(app, 'POST', '/v1/turns/search', { query: 'spare key', agentId: 'ana' })).body.hits).toHaveLength(2);
  });

  it('refuses bad requests with 400 naming the field', async () => {
    const id = randomUUID();
    const cases: [unknown, string][] = [
      [{}, 'query'],
      [{ query: '   ' }, 'query'],
      [{ query: 'x', mode: 'fuzzy' }, 'mode'],
      [{ query: 'x', topK: 0 }, 'topK'],
      [{ query: 'x', topK: ctx.config.MAX_TOP_K + 1 }, 'topK'],
      [{ query: 'x', mode: 'text', minScore: 0.2 }, 'minScore'],
      [{ query: 'x', minScore: 2 }, 'minScore'],
      [{ query: 'x', agentId: 'no spaces' }, 'agentId'],
      [{ query: 'x', userId: '' }, 'userId'],
      [{ query: 'x', conversationId: 'nope' }, 'conversationId'],
      [{ query: 'x', conversationId: id, excludeConversationId: id }, 'excludeConversationId'],
      [{ query: 'x', weights: { vector: 0, text: 0 } }, 'weights'],
      // Turns have no tags: a tag filter is refused, not ignored.
      [{ query: 'x', tagsAny: ['a'] }, 'tagsAny'],
      [{ query: 'x', asOf: 'last tuesday' }, 'asOf'],
      [{ query: 'x', asOf: '2026-05-12' }, 'asOf'],
      [{ query: 'x', groupBy: 'session' }, 'groupBy'],
    ];
    for (const [body, field] of cases) {
      const res = await call(app, 'POST', '/v1/turns/search', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(
        res.body.error.details.map((d: { path: string }) => d.path),
        JSON.stringify(res.body.error),
      ).toContain(field);
    }
    expect((await call(app, 'POST', '/v1/turns/search', '{not json')).status).toBe(400);
  });
});

describe('POST /v1/turns/search as of a moment, by conversation', () => {
  const day = (d: number, hour = 9) => new Date(Date.UTC(2023, 4, d, hour)).toISOString();
  async function importConversation(turns: { question: string; answer: string; at: string }[]) {
    const res = await call(app, 'POST', '/v1/conversations/import?agentId=tim&userId=u-1', conversationExport(turns, { agentId: 'tim' }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.conversation.id as string;
  }

  it('leaves out what was said after asOf, and finds nothing before the first turn', async () => {
    const early = await importConversation([{ question: 'I planted tomatoes in the garden.', answer: 'Lovely.', at: day(1) }]);
    await importConversation([{ question: 'The tomatoes in the garden are ripe now.', answer: 'Enjoy them.', at: day(20) }]);
    const search = (asOf?: string) => call(app, 'POST', '/v1/turns/search', { query: 'tomatoes garden', agentId: 'tim', ...(asOf ? { asOf } : {}) });
    expect((await search()).body.hits).toHaveLength(2);
    const asOfMay10 = await search('2023-05-10T00:00:00+02:00');
    expect(asOfMay10.status).toBe(200);
    expect(asOfMay10.body.hits.map((h: { conversationId: string }) => h.conversationId)).toEqual([early]);
    const beforeAll = await search('2023-04-01T00:00:00Z');
    expect(beforeAll.status).toBe(200);
    expect(beforeAll.body).toEqual({ hits: [], timeWindow: null });
  });

  it('reads the time the query names against asOf, says which window it read, and favours the turns said then', async () => {
    const old = await importConversation([{ question: 'I went hiking in the hills with Sam.', answer: 'Sounds fun.', at: day(1) }]);
    const recent = await importConversation([{ question: 'We walked in the hills, hiking for hours.', answer: 'Nice.', at: day(15) }]);
    const query = 'Where did I go hiking two weeks ago?';
    const res = await call(app, 'POST', '/v1/turns/search', { query, agentId: 'tim', asOf: day(29) });
    expect(res.status).toBe(200);
    // 29 May minus two weeks is the 15th, read loosely: a week either side.
    expect(res.body.timeWindow).toEqual({ from: day(8), to: day(22), text: 'two weeks ago' });
    expect(res.body.hits[0].conversationId).toBe(recent);
    // Asked a fortnight earlier, the same words name the 1st.
    const earlier = await call(app, 'POST', '/v1/turns/search', { query, agentId: 'tim', asOf: day(15, 8) });
    expect(earlier.body.timeWindow.text).toBe('two weeks ago');
    expect(earlier.body.hits.map((h: { conversationId: string }) => h.conversationId)).toEqual([old]);
    // A time that cannot be read is searched without a window, never refused.
    const unread = await call(app, 'POST', '/v1/turns/search', { query: 'hiking the first time', agentId: 'tim', asOf: day(29) });
    expect(unread.status).toBe(200);
    expect(unread.body.timeWindow).toBeNull();
    expect(unread.body.hits).toHaveLength(2);
  });

  it('groups by conversation: conversations ranked by their best turns, each with its turns', async () => {
    const long = await importConversation(
      ['Our cat Miso likes the sofa.', 'Miso the cat sleeps all day.', 'Miso the cat ate my plant.', 'Miso the cat hates the vet.'].map((question, i) => ({
        question,
        answer: 'I see.',
        at: day(2, 9 + i),
      })),
    );
    const other = await importConversation([{ question: 'The cat Miso came home late.', answer: 'Good.', at: day(5) }]);
    const res = await call(app, 'POST', '/v1/turns/search', { query: 'Miso the cat', agentId: 'tim', groupBy: 'conversation', mode: 'text' });
    expect(res.status).toBe(200);
    expect(res.body.timeWindow).toBeNull();
    const conversations = res.body.conversations as {
      conversationId: string;
      score: number;
      turns: { conversationId: string; score: number; ranks: { vector: number | null; text: number | null } }[];
    }[];
    expect(conversations.map((c) => c.conversationId).sort()).toEqual([long, other].sort());
    for (const c of conversations) {
      expect(c.turns.every((t) => t.conversationId === c.conversationId)).toBe(true);
      // Text mode: the text side alone, at the rank of the conversation's best turn.
      const { signals, k } = CONVERSATION_FUSION_WEIGHTS;
      expect(c.score).toBeCloseTo(signals.text / (k! + Math.min(...c.turns.map((t) => t.ranks.text!))), 10);
      expect(c.turns.map((t) => t.score)).toEqual([...c.turns.map((t) => t.score)].sort((a, b) => b - a));
    }
    expect(conversations.find((c) => c.conversationId === long)!.turns).toHaveLength(4);
    expect(conversations[0]!.score).toBeGreaterThanOrEqual(conversations[1]!.score);
  });
});

describe('chat recall of past turns', () => {
  it('cites a turn of another conversation of the same agent and user, as kind "turn"', async () => {
    const earlier = await chat({ message: 'Please note my locker code is 4512.', agentId: 'ana', userId: 'u-1' });
    // Another user's and another agent's turns with the same words are not theirs to recall.
    await chat({ message: 'My locker code is 7777.', agentId: 'ana', userId: 'u-2' });
    await chat({ message: 'My locker code is 1234.', agentId: 'other', userId: 'u-1' });

    const res = await chat({ message: 'What is my locker code?', agentId: 'ana', userId: 'u-1' });
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe('extractive');
    expect(res.body.answer).toContain('4512');
    expect(res.body.answer).not.toMatch(/7777|1234/);
    const turnCitations = res.body.citations.filter((c: { kind: string }) => c.kind === 'turn');
    expect(turnCitations).toEqual([
      { id: expect.any(Number), kind: 'turn', conversationId: earlier.body.conversationId, turn: 1, snippet: expect.stringContaining('4512') },
    ]);

    // The conversation's own turns are its history, never recalled as sources.
    const next = await chat({ message: 'And what is my locker code again?', agentId: 'ana', userId: 'u-1', conversationId: res.body.conversationId });
    const cited = next.body.citations.filter((c: { kind: string }) => c.kind === 'turn').map((c: { conversationId: string }) => c.conversationId);
    expect(cited).not.toContain(res.body.conversationId);
    expect(cited).toContain(earlier.body.conversationId);
  });

  it('streams turn sources in the retrieval event, and ignores the tag filters for them', async () => {
    const earlier = await chat({ message: 'The wifi password is hunter2-zebra.', agentId: 'wes' });
    const res = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'What is the wifi password?', agentId: 'wes', tagsAll: ['nothing-has-this'], stream: true }),
    });
    const text = await res.text();
    await ctx.backgroundTasks.whenIdle();
    const retrieval = /event: retrieval\ndata: (.*)\n/.exec(text)![1]!;
    const sources = JSON.parse(retrieval).sources as { kind: string; conversationId: string; turn: number; question: string; at: string }[];
    expect(sources).toEqual([
      expect.objectContaining({
        kind: 'turn',
        conversationId: earlier.body.conversationId,
        turn: 1,
        question: 'The wifi password is hunter2-zebra.',
        at: expect.any(String),
      }),
    ]);
  });

  it('recalls no turns without stored conversations to recall from', async () => {
    const res = await chat({ message: 'What is my locker code?', agentId: 'nobody' });
    expect(res.body.citations).toEqual([]);
  });
});

describe('users on the chat and conversations', () => {
  it('keeps a conversation to the user of its first turn: another user (or none) is a 404', async () => {
    const first = await chat({ message: 'Hello from user one.', agentId: 'ana', userId: 'u-1' });
    const id = first.body.conversationId;
    for (const body of [
      { message: 'hi', agentId: 'ana', userId: 'u-2', conversationId: id },
      { message: 'hi', agentId: 'ana', conversationId: id },
      { message: 'hi', agentId: 'ana', userId: 'u-2', conversationId: id, stream: true },
    ]) {
      const res = await call(app, 'POST', '/v1/chat', body);
      expect(res.status, JSON.stringify(body)).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    const anonymous = await chat({ message: 'Hello from nobody.', agentId: 'ana' });
    expect((await call(app, 'POST', '/v1/chat', { message: 'hi', agentId: 'ana', userId: 'u-1', conversationId: anonymous.body.conversationId })).status).toBe(
      404,
    );
    expect((await chat({ message: 'Still me.', agentId: 'ana', userId: 'u-1', conversationId: id })).status).toBe(200);

    const stored = await call(app, 'GET', `/v1/conversations/${id}?agentId=ana`);
    expect(stored.body.conversation).toMatchObject({ userId: 'u-1', turnCount: 2 });
    expect((await call(app, 'GET', `/v1/conversations/${anonymous.body.conversationId}?agentId=ana`)).body.conversation.userId).toBeNull();
  });

  it('lists by user, and carries the user through export and import', async () => {
    const one = await chat({ message: 'First, for u-1.', agentId: 'lia', userId: 'u-1' });
    await chat({ message: 'Then for u-2.', agentId: 'lia', userId: 'u-2' });
    const listed = await call(app, 'GET', '/v1/conversations?agentId=lia&userId=u-1');
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((c: { id: string; userId: string }) => [c.id, c.userId])).toEqual([[one.body.conversationId, 'u-1']]);
    expect((await call(app, 'GET', '/v1/conversations?agentId=lia')).body.items).toHaveLength(2);

    const exported = await call(app, 'GET', `/v1/conversations/${one.body.conversationId}/export?agentId=lia`);
    expect(exported.body.conversation.userId).toBe('u-1');
    const same = await call(app, 'POST', '/v1/conversations/import', exported.body);
    expect(same.body.conversation).toMatchObject({ agentId: 'lia', userId: 'u-1' });
    const moved = await call(app, 'POST', '/v1/conversations/import?userId=u-9', exported.body);
    expect(moved.body.conversation).toMatchObject({ agentId: 'lia', userId: 'u-9' });
    // The imported turns are u-9's now, for search as for recall.
    const hits = await call(app, 'POST', '/v1/turns/search', { query: 'First for u-1', agentId: 'lia', userId: 'u-9' });
    expect(hits.body.hits.map((h: { conversationId: string }) => h.conversationId)).toEqual([moved.body.conversation.id]);
    expect((await call(app, 'POST', '/v1/conversations/import?userId=no%20spaces', exported.body)).body.error.details[0].path).toBe('userId');
  });

  it('indexes the turns a conversation lacks (a crash, an older release) when it is next continued', async () => {
    const first = await chat({ message: 'The spare tyre is in the boot.', agentId: 'kim' });
    const id = first.body.conversationId;
    await ctx.database.db.transaction(async (tx) => deleteConversationTurns(tx, 'default', id));
    const search = async () => (await call(app, 'POST', '/v1/turns/search', { query: 'spare tyre boot', agentId: 'kim', mode: 'text', topK: 5 })).body.hits;
    expect(await search()).toEqual([]);
    await chat({ message: 'Thanks.', agentId: 'kim', conversationId: id });
    expect((await search()).map((h: { turn: number; after: string }) => h.turn)).toEqual([1]);
    const turns = await call(app, 'POST', '/v1/turns/search', { query: 'Thanks', agentId: 'kim', conversationId: id, mode: 'text' });
    expect(turns.body.hits.map((h: { turn: number }) => h.turn).sort()).toEqual([1, 2]);
  });

  it('deletes a conversation with its turns', async () => {
    const first = await chat({ message: 'The quokka lives on Rottnest.', agentId: 'dan' });
    const search = () => call(app, 'POST', '/v1/turns/search', { query: 'quokka Rottnest', agentId: 'dan' });
    expect((await search()).body.hits).toHaveLength(1);
    expect((await call(app, 'DELETE', `/v1/conversations/${first.body.conversationId}?agentId=dan`)).status).toBe(204);
    expect((await search()).body.hits).toEqual([]);
  });
});
