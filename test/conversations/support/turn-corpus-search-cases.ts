import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { createPgConversationStore } from '../../../src/conversations/pg-conversation-store.js';
import { createTurnIndex } from '../../../src/conversations/turn-index.js';
import { turnBm25Text } from '../../../src/conversations/turn-record.js';
import { createTurnSearch } from '../../../src/conversations/turn-search.js';
import {
  CONVERSATION_PRIOR,
  CONVERSATION_PRIOR_BY_EMBEDDER,
  CONVERSATION_PRIOR_KEPT,
  conversationStandings,
} from '../../../src/conversations/conversation-prior.js';
import { applyBoosts } from '../../../src/retrieval/boost.js';
import { CONVERSATION_VECTOR_FEEDBACK } from '../../../src/conversations/vector-feedback.js';
import { queryRows } from '../../../src/db/query-rows.js';
import { defaultAnalyzer } from '../../../src/retrieval/bm25/analyzer.js';
import { hybridCandidates } from '../../../src/retrieval/hybrid-candidates.js';
import { createRetrievalEngine } from '../../../src/retrieval/retrieval-engine.js';
import { PAYLOAD_ALONG_MAX_CANDIDATES, searchRows } from '../../../src/retrieval/row-search.js';
import { turns as turnsTable } from '../../../src/db/schema/index.js';
import { TURN_BOOSTS, TURN_CORPUS, turnFilter, turnKeysAnalyzer } from '../../../src/conversations/turn-corpus.js';
import { InMemoryBm25Index } from '../../../src/retrieval/bm25/bm25.js';
import { unit } from '../../../testkit/vector-fixtures.js';
import { embedder, pick, exported, type TurnCorpusFixture } from './turn-corpus-fixture.js';

/** Search: ranking with vector feedback, rows read early or late, BM25 over the whole tenant. Registered inside the turns corpus contract's `describe`. */
export function turnCorpusSearchCases(f: TurnCorpusFixture) {
  const { db, tenant, acme, indexedTurns } = f;
  // Words counted in dimensions of their own (no hashed buckets to collide), in the store's 64.
  const vocabulary = ['doctor', 'knee', 'alvarez', 'physiotherapy', 'garden', 'porto', 'coat', 'novel', 'lamp', 'bread'];
  const keywords: typeof embedder = {
    ...embedder,
    embed: async (texts) =>
      texts.map((text) => {
        const v = new Array<number>(64).fill(0);
        for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) if (vocabulary.includes(word)) v[vocabulary.indexOf(word)]! += 1;
        // A text without any of the words still needs a unit vector: one dimension of its own.
        if (!v.some((x) => x !== 0)) v[63] = 1;
        return unit(v);
      }),
  };
  const others = ['garden', 'porto', 'coat', 'novel', 'lamp', 'bread'];

  it("ranks conversations with the vector side's feedback, and turns without it unless asked", async () => {
    const index = createTurnIndex({ db: db(), embedder: keywords, tenantId: 'feedback' });
    const store = createPgConversationStore({ db: db(), tenantId: 'feedback', turnIndex: index });
    const search = createTurnSearch({ db: db(), embedder: keywords, tenantId: 'feedback' });
    const one = (userId: string, question: string, answer: string, day: number) =>
      store.import(exported('fb', [{ question, answer, at: `2025-04-${String(day).padStart(2, '0')}T09:00:00.000Z` }], userId), 'fb', userId);
    const seen = await one(
      'ana',
      'Saw the doctor about my knee; the doctor sent me on.',
      'Physiotherapy with Alvarez, physiotherapy twice a week, Alvarez physiotherapy.',
      1,
    );
    const physio = await one('ana', 'Physiotherapy with Alvarez moved to Friday.', 'Alvarez physiotherapy on Friday for the knee.', 2);
    for (const [i, word] of others.entries()) await one('ana', `A ${word}, a ${word} and a ${word}.`, `The doctor of ${word}s.`, 3 + i);
    // Another user's session, nearer still: the feedback reads the asking user's turns only.
    await one('bo', 'Saw the doctor: Alvarez physiotherapy.', 'Knee physiotherapy with Alvarez.', 1);
    const asked = { agentId: 'fb', userId: 'ana', mode: 'vector' as const, topK: 8 };
    const rankOf = (result: { conversations: { conversationId: string }[] }, id: string) => result.conversations.findIndex((c) => c.conversationId === id) + 1;

    const plain = await search.searchConversations('doctor', { ...asked, vectorFeedback: { turns: 0, weight: 0 } });
    const fed = await search.searchConversations('doctor', { ...asked, vectorFeedback: { turns: 1, weight: 3 } });
    expect(rankOf(plain, seen.id)).toBe(1);
    expect(rankOf(fed, seen.id)).toBe(1);
    // The physiotherapy session never says "doctor": last without, second through the first session's words.
    expect(rankOf(plain, physio.id)).toBe(8);
    expect(rankOf(fed, physio.id)).toBe(2);
    expect(fed.conversations.flatMap((c) => c.turns.map((t) => t.userId))).toEqual(new Array(8).fill('ana'));

    // Conversations are ranked with CONVERSATION_VECTOR_FEEDBACK unless told otherwise; turns without any.
    expect(await search.searchConversations('doctor', asked)).toEqual(
      await search.searchConversations('doctor', { ...asked, vectorFeedback: CONVERSATION_VECTOR_FEEDBACK }),
    );
    expect(await search.searchConversations('doctor', asked)).not.toEqual(plain);
    expect(await search.search('doctor', asked)).toEqual(await search.search('doctor', { ...asked, vectorFeedback: { turns: 0, weight: 0 } }));

    // Made while the text side runs: a failed embedding fails the search once, in every mode that embeds.
    const down = createTurnSearch({ db: db(), embedder: { ...keywords, embed: () => Promise.reject(new Error('model down')) }, tenantId: 'feedback' });
    for (const mode of ['hybrid', 'vector'] as const) {
      await expect(down.searchConversations('doctor', { ...asked, mode })).rejects.toThrow('model down');
    }
    expect((await down.searchConversations('doctor', { ...asked, mode: 'text' })).conversations.length).toBeGreaterThan(0);
  });

  it('orders a hybrid turn list past its first turns by how their conversations rank, reading the text side once', async () => {
    const index = createTurnIndex({ db: db(), embedder: keywords, tenantId: 'prior' });
    const store = createPgConversationStore({ db: db(), tenantId: 'prior', turnIndex: index });
    const search = createTurnSearch({ db: db(), embedder: keywords, tenantId: 'prior' });
    const at = (day: number, minute = 0) => `2025-04-${String(day).padStart(2, '0')}T09:${String(minute).padStart(2, '0')}:00.000Z`;
    // A session about the knee, its doctor named once a turn, among sessions that name a doctor twice.
    const knee = await store.import(
      exported(
        'pr',
        Array.from({ length: 8 }, (_, i) => ({
          question: `The doctor looked at my knee, visit ${i}.`,
          answer: 'Alvarez physiotherapy for the knee.',
          at: at(1, i),
        })),
        'ana',
      ),
      'pr',
      'ana',
    );
    for (const [i, word] of others.entries()) {
      await store.import(exported('pr', [{ question: `The doctor and a ${word}.`, answer: `A ${word} for the doctor.`, at: at(3 + i) }], 'ana'), 'pr', 'ana');
    }
    const asked = { agentId: 'pr', userId: 'ana', topK: 10 };
    const turnsOf = (hits: { conversationId: string; turn: number }[]) => hits.map((h) => `${h.conversationId}#${h.turn}`);

    // The statements a search sends: BM25's, and the feedback's mean, which only the conversations' ranking reads.
    const statementsOf = async <T>(run: () => Promise<T>): Promise<{ result: T; text: number; feedback: number }> => {
      const client = (db() as unknown as { $client: { query: (...args: unknown[]) => Promise<unknown> } }).$client;
      const query = client.query;
      const counted = { text: 0, feedback: 0 };
      client.query = (...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
        if (text?.includes('weights AS MATERIALIZED')) counted.text += 1;
        if (text?.includes('avg(')) counted.feedback += 1;
        return query.apply(client, args);
      };
      try {
        return { result: await run(), ...counted };
      } finally {
        client.query = query;
      }
    };
    const { result: prior, ...statements } = await statementsOf(() => search.search('doctor', asked));
    expect(statements).toEqual({ text: 1, feedback: 1 });
    const plain = await search.search('doctor', { ...asked, conversationPrior: 0 });

    // The other sessions say "doctor" twice a turn and lead the list. Past its kept turns, the
    // knee's session (third as a conversation) passes the turn of one ranked below it.
    const ranked = conversationStandings((await search.searchConversations('doctor', { ...asked, topK: 50 })).conversations);
    expect(ranked.get(knee.id)?.place).toBe(3);
    const fused = (await search.search('doctor', { ...asked, topK: 50, conversationPrior: 0, conversationDecay: 1 })).hits;
    const expected = applyBoosts(TURN_BOOSTS, fused, { timeWindow: null, conversationPrior: CONVERSATION_PRIOR, conversationStandings: ranked });
    const conversationsOf = (hits: { conversationId: string }[]) => hits.map((h) => h.conversationId);
    expect(conversationsOf(prior.hits)).toEqual(conversationsOf(expected.slice(0, 10)));
    const placesOf = (hits: { conversationId: string }[]) => hits.flatMap((h, i) => (h.conversationId === knee.id ? [i + 1] : []));
    expect(placesOf(plain.hits)).toEqual([7, 8, 9, 10]);
    expect(placesOf(prior.hits)).toEqual([5, 6, 7, 10]);
    expect(turnsOf(prior.hits).slice(0, CONVERSATION_PRIOR_KEPT)).toEqual(turnsOf(plain.hits).slice(0, CONVERSATION_PRIOR_KEPT));
    // A mode of one side, one conversation's turns, or no more turns than are kept: ranked by the turns alone, no conversations searched.
    for (const options of [{ mode: 'text' as const }, { mode: 'vector' as const }, { conversationId: knee.id }, { topK: CONVERSATION_PRIOR_KEPT }]) {
      const { result, feedback } = await statementsOf(() => search.search('doctor', { ...asked, ...options }));
      expect(feedback, JSON.stringify(options)).toBe(0);
      expect(result).toEqual(await search.search('doctor', { ...asked, ...options, conversationPrior: 0 }));
    }
    // An embedder whose tuning chose no prior (CONVERSATION_PRIOR_BY_EMBEDDER): the same list as without it, no conversations searched.
    const staticId = Object.keys(CONVERSATION_PRIOR_BY_EMBEDDER).find((id) => CONVERSATION_PRIOR_BY_EMBEDDER[id] === 0)!;
    const withoutPrior = createTurnSearch({ db: db(), embedder: { ...keywords, id: staticId }, tenantId: 'prior' });
    const { result: unprimed, feedback } = await statementsOf(() => withoutPrior.search('doctor', asked));
    expect(feedback).toBe(0);
    expect(turnsOf(unprimed.hits)).toEqual(turnsOf(plain.hits));
    expect(turnsOf(unprimed.hits)).not.toEqual(turnsOf(prior.hits));
  });

  it('shows the same hits whether a search reads their rows with the candidates or after fusion', async () => {
    const turns = Array.from({ length: 24 }, (_, i) => ({
      question: `Garden note ${i}: the tomatoes in bed ${i} need water.`,
      answer: `Bed ${i} watered; tomatoes noted.`,
      at: new Date(Date.UTC(2025, 4, 1, 9, i)).toISOString(),
    }));
    const imported = await acme().store.import(exported('gardener', turns), 'gardener');
    const engine = createRetrievalEngine({ db: db(), embedder, analyzer: turnKeysAnalyzer(defaultAnalyzer) });
    const payload = { conversationId: turnsTable.conversationId, turn: turnsTable.turn, question: turnsTable.question, answer: turnsTable.answer };
    const rowsFor = (topK: number) =>
      searchRows<{ conversationId: string; turn: number; question: string; answer: string }>(engine, db(), TURN_CORPUS, 'tomatoes bed water', {
        mode: 'hybrid',
        filter: turnFilter('acme', { agentId: 'gardener' }),
        topK,
        weights: { signals: { vector: 0.5, text: 1 }, k: 20 },
        payload,
      });
    // topK 10 fuses 50 candidates a side, read with their rows; topK 11 fuses 55, read after.
    expect(hybridCandidates(10)).toBeLessThanOrEqual(PAYLOAD_ALONG_MAX_CANDIDATES);
    expect(hybridCandidates(11)).toBeGreaterThan(PAYLOAD_ALONG_MAX_CANDIDATES);
    const along = await rowsFor(10);
    const after = await rowsFor(11);
    expect(after).toHaveLength(11);
    for (const { row } of after) expect(row).toEqual({ conversationId: imported.id, turn: row.turn, ...pick(turns[row.turn - 1]!) });
    expect(after.slice(0, 10)).toEqual(along);
  });

  it('scores a user’s turns as BM25 over the whole tenant, by probes of few turns and by postings read', async () => {
    const probes = tenant('probes');
    const at = (minute: number) => new Date(Date.UTC(2025, 4, 1, 9, minute)).toISOString();
    const turnsOf = (count: number, zebras: number) =>
      Array.from({ length: count }, (_, i) => ({
        question: `apple ${i % 3 === 0 ? 'pie' : 'juice'} ${i < zebras ? 'zebra' : 'lion'} number ${i}`,
        answer: `apple answer ${i}`,
        at: at(i),
      }));
    await probes.store.import(exported('zoo', turnsOf(3, 1)), 'zoo', 'few');
    await probes.store.import(exported('zoo', turnsOf(20, 2)), 'zoo', 'many');
    await probes.store.import(exported('zoo', turnsOf(20, 0)), 'zoo', 'many');
    const rows = await indexedTurns('probes');
    const reference = new InMemoryBm25Index();
    for (const row of rows) reference.add(row.id, turnBm25Text({ ...row, at: new Date(Number(row.at_ms)) }));
    const userOf = new Map(rows.map((r) => [r.id, r.user_id]));
    const idOf = new Map<string, string>();
    for (const r of await queryRows<{ id: string; conversation_id: string; turn: number }>(
      db(),
      sql`SELECT id::text AS id, conversation_id::text AS conversation_id, turn FROM turns WHERE tenant_id = 'probes'`,
    )) {
      idOf.set(`${r.conversation_id}/${r.turn}`, r.id);
    }
    // Probed when turns x terms x PROBE_COST (10) is below the terms' document frequencies summed:
    // 'apple' (in all 43 turns) and 'apple juice' (43 + 28) of 'few' (3 turns); the terms'
    // postings read for 'many' (40 turns) and for 'zebra lion' (3 + 40 < 3 x 2 x 10).
    for (const [query, userId] of [
      ['apple', 'few'],
      ['apple juice', 'few'],
      ['apple', 'many'],
      ['zebra lion', 'few'],
      ['zebra pie', 'many'],
    ] as const) {
      const expected = reference
        .search(query, { topK: 100 })
        .filter((h) => userOf.get(h.id) === userId)
        .map((h) => ({ id: h.id, score: h.score }));
      const { hits } = await probes.search.search(query, { agentId: 'zoo', userId, mode: 'text', topK: 100, conversationDecay: 1 });
      const actual = hits.map((h) => ({ id: idOf.get(`${h.conversationId}/${h.turn}`)!, score: h.score }));
      expect(actual.map((h) => h.id).sort(), `${query} / ${userId}`).toEqual(expected.map((h) => h.id).sort());
      const scoreOf = new Map(expected.map((h) => [h.id, h.score]));
      for (const hit of actual) expect(hit.score, `${query} / ${userId}`).toBeCloseTo(scoreOf.get(hit.id)!, 9);
    }
  });
}
