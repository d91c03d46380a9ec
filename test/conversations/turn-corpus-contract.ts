import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/messages.js';
import type { ConversationExport, ConversationStore } from '../../src/conversations/conversation-types.js';
import { createPgConversationStore } from '../../src/conversations/pg-conversation-store.js';
import { type TurnIndex, createTurnIndex } from '../../src/conversations/turn-index.js';
import { turnBm25Text } from '../../src/conversations/turn-record.js';
import { type TurnSearch, createTurnSearch } from '../../src/conversations/turn-search.js';
import { CONVERSATION_VECTOR_FEEDBACK } from '../../src/conversations/vector-feedback.js';
import { reindexStaleTurns } from '../../src/conversations/turn-text-index.js';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { defaultAnalyzer } from '../../src/retrieval/bm25/analyzer.js';
import { hybridCandidates } from '../../src/retrieval/hybrid-candidates.js';
import { createRetrievalEngine } from '../../src/retrieval/retrieval-engine.js';
import { PAYLOAD_ALONG_MAX_CANDIDATES, searchRows } from '../../src/retrieval/row-search.js';
import { turns as turnsTable } from '../../src/db/schema/index.js';
import { TURN_CORPUS, turnFilter, turnKeysAnalyzer } from '../../src/conversations/turn-corpus.js';
import { InMemoryBm25Index } from '../../src/retrieval/bm25/bm25.js';
import { dateInWords } from '../../src/text/date-in-words.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { unit } from '../../testkit/vector-fixtures.js';
import type { DatabaseDriver } from '../support/database-drivers.js';

const embedder = createHashEmbedder(64);

/** A turn's messages as a chat stores them: the question, maybe a tool call and its result, the answer. */
function exchange(question: string, answer: string, tool?: string): { message: ChatMessage }[] {
  const messages: ChatMessage[] = [{ role: 'user', content: question }];
  if (tool) {
    messages.push({ role: 'assistant', content: 'Let me look.', toolCalls: [{ id: 't1', name: 'search_memories', arguments: '{}' }] });
    messages.push({ role: 'tool', toolCallId: 't1', content: tool });
  }
  messages.push({ role: 'assistant', content: answer, toolCalls: [] });
  return messages.map((message) => ({ message }));
}

const pick = ({ question, answer }: { question: string; answer: string }) => ({ question, answer });

/** An export of question/answer pairs, each asked at its own time. */
function exported(agentId: string, turns: { question: string; answer: string; at: string }[], userId?: string): ConversationExport {
  return {
    format: 'memrag.conversation',
    version: 1,
    conversation: { id: randomUUID(), agentId, ...(userId ? { userId } : {}), title: turns[0]!.question, createdAt: turns[0]!.at, updatedAt: turns.at(-1)!.at },
    messages: turns.flatMap((t, i) => [
      { seq: 2 * i + 1, turn: i + 1, role: 'user' as const, content: t.question, createdAt: t.at },
      { seq: 2 * i + 2, turn: i + 1, role: 'assistant' as const, content: t.answer, toolCalls: [], createdAt: t.at },
    ]),
    checkpoints: [],
    summary: null,
  };
}

/** The turns corpus (episodic recall): indexing, neighbours, search, deletion, isolation. Run by describeOnDrivers. */
export function turnCorpusContract(driver: DatabaseDriver) {
  describe('turns corpus', () => {
    let database: Database | undefined;
    const db = () => database!.db;
    const tenant = (tenantId: string) => {
      const index = createTurnIndex({ db: db(), embedder, tenantId });
      return {
        index,
        store: createPgConversationStore({ db: db(), tenantId, turnIndex: index }) as ConversationStore,
        search: createTurnSearch({ db: db(), embedder, tenantId }) as TurnSearch,
      };
    };
    let acme: { index: TurnIndex; store: ConversationStore; search: TurnSearch };

    beforeAll(async () => {
      database = await driver.open();
      await ensureVectorSpace(database.db, embedder);
      acme = tenant('acme');
    });
    afterAll(async () => {
      await database?.close();
    });

    /** A tenant's turns with what their BM25 text is made of (`turnBm25Text` of the row, `at` in ms). */
    const indexedTurns = (tenantId: string) =>
      queryRows<{
        id: string;
        at_ms: number;
        before: string;
        question: string;
        answer: string;
        after: string;
        facts: string;
        bm25_length: number | null;
        user_id: string;
      }>(
        db(),
        sql`SELECT id::text AS id, (extract(epoch FROM at) * 1000)::float8 AS at_ms, before, question, answer, after, facts, bm25_length, user_id FROM turns WHERE tenant_id = ${tenantId}`,
      );

    /**
     * The BM25 index kept incrementally must equal one rebuilt from the rows (date, neighbours,
     * question and answer): postings, document frequencies, lengths and totals, per tenant.
     */
    async function expectIndexExact(tenantId: string) {
      const rows = await indexedTurns(tenantId);
      const expected: string[] = [];
      const df = new Map<string, number>();
      let totalLength = 0;
      for (const row of rows) {
        let length = 0;
        for (const [term, tf] of defaultAnalyzer.termFrequencies(turnBm25Text({ ...row, at: new Date(Number(row.at_ms)) }))) {
          expected.push(`${row.id} ${term} ${tf}`);
          df.set(term, (df.get(term) ?? 0) + 1);
          length += tf;
        }
        expect(row.bm25_length).toBe(length);
        totalLength += length;
      }
      const postings = await queryRows<{ p: string }>(
        db(),
        sql`SELECT turn_id::text || ' ' || term || ' ' || tf AS p FROM turn_postings WHERE tenant_id = ${tenantId}`,
      );
      expect(postings.map((r) => r.p).sort()).toEqual(expected.sort());
      const terms = await queryRows<{ term: string; df: number }>(db(), sql`SELECT term, df FROM turn_term_stats WHERE tenant_id = ${tenantId}`);
      expect(new Map(terms.map((r) => [r.term, Number(r.df)]))).toEqual(df);
      const [corpus] = await queryRows<{ total: string; total_length: string }>(
        db(),
        sql`SELECT total, total_length FROM turn_corpus_stats WHERE tenant_id = ${tenantId}`,
      );
      expect({ total: Number(corpus?.total ?? 0), totalLength: Number(corpus?.total_length ?? 0) }).toEqual({ total: rows.length, totalLength });
    }

    const rowsOf = (conversationId: string) =>
      queryRows<{
        turn: number;
        question: string;
        answer: string;
        before: string;
        after: string;
        embedded_text: string;
        embedding: string;
        at: Date;
        user_id: string;
      }>(
        db(),
        sql`SELECT turn, question, answer, before, after, embedded_text, embedding::text AS embedding, at, user_id FROM turns WHERE conversation_id = ${conversationId} ORDER BY turn`,
      );

    it('indexes each turn with its date in words and the message before it; the next question becomes its after, in BM25 only', async () => {
      const id = randomUUID();
      await acme.store.appendTurn({
        id,
        agentId: 'ana',
        userId: 'u-ana',
        messages: exchange('I adopted a beagle puppy yesterday.', 'Congratulations! What did you name the beagle?'),
      });
      expect(await acme.index.indexConversation(id, { turns: [1] })).toBe(1);
      const [first] = await rowsOf(id);
      expect(first).toMatchObject({ turn: 1, before: '', after: '', user_id: 'u-ana', question: 'I adopted a beagle puppy yesterday.' });
      expect(first!.embedded_text.split('\n')[0]).toBe(dateInWords(new Date(first!.at)));
      await expectIndexExact('acme');

      await acme.store.appendTurn({ id, agentId: 'ana', userId: 'u-ana', messages: exchange('Biscuit', 'Biscuit is a lovely name.', 'no memories found') });
      expect(await acme.index.indexConversation(id, { turns: [2] })).toBe(1);
      const [one, two] = await rowsOf(id);
      // The answer is the final text: neither the tool's result nor the text announcing the call.
      expect(two).toMatchObject({
        question: 'Biscuit',
        answer: 'Biscuit is a lovely name.',
        before: 'Congratulations! What did you name the beagle?',
        after: '',
      });
      expect(two!.embedded_text).toContain('Before: Congratulations! What did you name the beagle?');
      expect(one!.after).toBe('Biscuit');
      // Turn 1's vector and embedded text stay: only its postings took the new words.
      expect(one!.embedding).toBe(first!.embedding);
      expect(one!.embedded_text).toBe(first!.embedded_text);
      await expectIndexExact('acme');

      // Found by the neighbours' words: the name only turn 2 says, the breed only turn 1 says.
      const byName = (await acme.search.search('Biscuit', { agentId: 'ana', mode: 'text' })).hits;
      expect(byName.map((h) => h.turn).sort()).toEqual([1, 2]);
      const byBreed = (await acme.search.search('what is the name of my beagle', { agentId: 'ana', mode: 'text' })).hits;
      expect(byBreed.map((h) => h.turn).sort()).toEqual([1, 2]);
      expect(byBreed.find((h) => h.turn === 2)).toMatchObject({ conversationId: id, answer: 'Biscuit is a lovely name.', agentId: 'ana', userId: 'u-ana' });

      // Idempotent per (conversation, turn), and the backfill list reads what is indexed.
      expect(await acme.index.indexConversation(id)).toBe(0);
      expect((await acme.store.load(id, 'ana'))!.indexedTurns).toEqual([1, 2]);
      await expectIndexExact('acme');
    });

    it('indexes turns out of order to the same rows', async () => {
      const id = randomUUID();
      for (const n of [1, 2, 3]) await acme.store.appendTurn({ id, agentId: 'olga', messages: exchange(`question ${n} about kayaks`, `answer ${n}`) });
      expect(await acme.index.indexConversation(id, { turns: [3] })).toBe(1);
      expect(await acme.index.indexConversation(id, { turns: [1] })).toBe(1);
      expect(await acme.index.indexConversation(id, { turns: [2] })).toBe(1);
      expect((await rowsOf(id)).map((r) => [r.turn, r.before, r.after])).toEqual([
        [1, '', 'question 2 about kayaks'],
        [2, 'answer 1', 'question 3 about kayaks'],
        [3, 'answer 2', ''],
      ]);
      await expectIndexExact('acme');
    });

    it('finds the turns of a month by its name', async () => {
      const conversation = exported('dora', [
        { question: 'Book the dentist for Thursday.', answer: 'Booked the dentist.', at: '2026-05-12T09:00:00.000Z' },
        { question: 'Remind me to water the ferns.', answer: 'I will remind you about the ferns.', at: '2026-05-20T18:30:00.000Z' },
      ]);
      const later = exported('dora', [
        { question: 'Cancel the gym subscription.', answer: 'Cancelled the gym.', at: '2026-06-03T08:00:00.000Z' },
        { question: 'Which films are on tonight?', answer: 'Three films are on.', at: '2026-07-16T20:00:00.000Z' },
      ]);
      const may = await acme.store.import(conversation, 'dora');
      await acme.store.import(later, 'dora');
      const hits = (await acme.search.search('what did I say in May', { agentId: 'dora', mode: 'text', topK: 10 })).hits;
      expect(hits.map((h) => [h.conversationId, h.turn])).toEqual(
        expect.arrayContaining([
          [may.id, 1],
          [may.id, 2],
        ]),
      );
      expect(hits.every((h) => h.at.getUTCMonth() === 4)).toBe(true);
      expect(hits[0]!.at.toISOString()).toMatch(/^2026-05-/);
      // Tuesday 12 May 2026: the weekday is a word too.
      expect((await acme.search.search('tuesday', { agentId: 'dora', mode: 'text' })).hits.map((h) => h.question)).toEqual(['Book the dentist for Thursday.']);
      await expectIndexExact('acme');
    });

    it('indexes an imported conversation at import, searchable at once in every mode', async () => {
      const imported = await acme.store.import(
        exported('imma', [
          { question: 'My locker code is 4512.', answer: 'Noted: locker 4512.', at: '2025-03-01T10:00:00.000Z' },
          { question: 'And the bike lock?', answer: 'The bike lock is 9931.', at: '2025-03-01T10:01:00.000Z' },
        ]),
        'imma',
      );
      const rows = await rowsOf(imported.id);
      expect(rows.map((r) => [r.turn, r.before, r.after])).toEqual([
        [1, '', 'And the bike lock?'],
        [2, 'Noted: locker 4512.', ''],
      ]);
      for (const mode of ['hybrid', 'vector', 'text'] as const) {
        const [hit] = (await acme.search.search('locker code 4512', { agentId: 'imma', mode, topK: 1 })).hits;
        expect(hit, mode).toMatchObject({ conversationId: imported.id, turn: 1, question: 'My locker code is 4512.', userId: null });
        expect(hit!.ranks[mode === 'text' ? 'vector' : 'text'] === null || mode === 'hybrid').toBe(true);
      }
      expect((await acme.store.load(imported.id, 'imma'))!.indexedTurns).toEqual([1, 2]);
      await expectIndexExact('acme');
    });

    it("ranks conversations with the vector side's feedback, and turns without it unless asked", async () => {
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
      const others = ['garden', 'porto', 'coat', 'novel', 'lamp', 'bread'];
      for (const [i, word] of others.entries()) await one('ana', `A ${word}, a ${word} and a ${word}.`, `The doctor of ${word}s.`, 3 + i);
      // Another user's session, nearer still: the feedback reads the asking user's turns only.
      await one('bo', 'Saw the doctor: Alvarez physiotherapy.', 'Knee physiotherapy with Alvarez.', 1);
      const asked = { agentId: 'fb', userId: 'ana', mode: 'vector' as const, topK: 8 };
      const rankOf = (result: { conversations: { conversationId: string }[] }, id: string) =>
        result.conversations.findIndex((c) => c.conversationId === id) + 1;

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

    it('shows the same hits whether a search reads their rows with the candidates or after fusion', async () => {
      const turns = Array.from({ length: 24 }, (_, i) => ({
        question: `Garden note ${i}: the tomatoes in bed ${i} need water.`,
        answer: `Bed ${i} watered; tomatoes noted.`,
        at: new Date(Date.UTC(2025, 4, 1, 9, i)).toISOString(),
      }));
      const imported = await acme.store.import(exported('gardener', turns), 'gardener');
      const engine = createRetrievalEngine({ db: db(), embedder, analyzer: turnKeysAnalyzer(defaultAnalyzer) });
      const payload = { conversationId: turnsTable.conversationId, turn: turnsTable.turn, question: turnsTable.question, answer: turnsTable.answer };
      const rowsFor = (topK: number) =>
        searchRows<{ conversationId: string; turn: number; question: string; answer: string }>(engine, db(), TURN_CORPUS, 'tomatoes bed water', {
          mode: 'hybrid',
          filter: turnFilter('acme', { agentId: 'gardener' }),
          topK,
          weights: { vector: 0.5, text: 1, k: 20 },
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

    it('adds extracted facts to a turn’s BM25 keys, not its vector, once each', async () => {
      const { id } = await acme.store.import(
        exported('fay', [{ question: 'We just got back from Lisbon.', answer: 'Welcome home!', at: '2026-03-01T10:00:00.000Z' }]),
        'fay',
      );
      const search = async () => (await acme.search.search('Portugal trip', { agentId: 'fay', mode: 'text' })).hits;
      expect(await search()).toEqual([]);
      const [before] = await queryRows<{ embedding: string }>(db(), sql`SELECT embedding::text AS embedding FROM turns WHERE conversation_id = ${id}`);
      expect(await acme.index.addFacts(id, 1, ['The user took a trip to Portugal.', 'The user took a trip to Portugal.'])).toBe(true);
      expect((await search()).map((h) => [h.conversationId, h.turn])).toEqual([[id, 1]]);
      // Known facts add nothing; a turn that is not there is not found.
      expect(await acme.index.addFacts(id, 1, ['  The user took a trip   to Portugal. '])).toBe(false);
      expect(await acme.index.addFacts(id, 7, ['The user likes figs.'])).toBe(false);
      expect(await acme.index.addFacts(id, 1, ['The user flew with TAP.'])).toBe(true);
      const [after] = await queryRows<{ embedding: string; facts: string }>(
        db(),
        sql`SELECT embedding::text AS embedding, facts FROM turns WHERE conversation_id = ${id}`,
      );
      expect(after!.facts).toBe('The user took a trip to Portugal.\nThe user flew with TAP.');
      expect(after!.embedding).toBe(before!.embedding);
      await expectIndexExact('acme');
      // Another tenant cannot key acme's turn.
      expect(await tenant('globex').index.addFacts(id, 1, ['The user is a spy.'])).toBe(false);
    });

    it('takes a deleted conversation’s turns out of the postings and totals', async () => {
      const before = await queryRows(db(), sql`SELECT total, total_length FROM turn_corpus_stats WHERE tenant_id = 'acme'`);
      const terms = await queryRows(db(), sql`SELECT term, df FROM turn_term_stats WHERE tenant_id = 'acme' ORDER BY term`);
      const imported = await acme.store.import(
        exported('del', [
          { question: 'The zeppelin hangar is in Friedrichshafen.', answer: 'Zeppelins, noted.', at: '2025-01-01T00:00:00.000Z' },
          { question: 'And the museum?', answer: 'The zeppelin museum too.', at: '2025-01-01T00:01:00.000Z' },
        ]),
        'del',
      );
      expect((await acme.search.search('zeppelin', { agentId: 'del', mode: 'text' })).hits).toHaveLength(2);
      expect(await acme.store.delete(imported.id, 'del')).toBe(true);
      expect(await queryRows(db(), sql`SELECT total, total_length FROM turn_corpus_stats WHERE tenant_id = 'acme'`)).toEqual(before);
      expect(await queryRows(db(), sql`SELECT term, df FROM turn_term_stats WHERE tenant_id = 'acme' ORDER BY term`)).toEqual(terms);
      expect((await acme.search.search('zeppelin', { agentId: 'del', mode: 'hybrid' })).hits).toEqual([]);
      await expectIndexExact('acme');
      // A turn indexed after its conversation was deleted is nothing, not an error.
      expect(await acme.index.indexConversation(imported.id)).toBe(0);
    });

    it('keeps turns to their tenant, agent, user and conversation', async () => {
      const globex = tenant('globex');
      const words = 'The quetzalcoatlus flies over the vault lake';
      const alpha = await acme.store.import(
        exported('shared-agent', [{ question: words, answer: 'Quetzalcoatlus noted.', at: '2025-02-02T00:00:00.000Z' }], 'u-1'),
        'shared-agent',
      );
      const other = await acme.store.import(
        exported('shared-agent', [{ question: words, answer: 'Noted for user two.', at: '2025-02-02T00:00:00.000Z' }], 'u-2'),
        'shared-agent',
      );
      const anonymous = await acme.store.import(
        exported('shared-agent', [{ question: words, answer: 'Noted for nobody.', at: '2025-02-02T00:00:00.000Z' }]),
        'shared-agent',
      );
      const ids = (hits: { conversationId: string }[]) => hits.map((h) => h.conversationId).sort();
      for (const mode of ['hybrid', 'vector', 'text'] as const) {
        expect((await globex.search.search(words, { agentId: 'shared-agent', mode, topK: 50 })).hits, mode).toEqual([]);
        expect(ids((await acme.search.search(words, { agentId: 'shared-agent', mode, topK: 50 })).hits), mode).toEqual(
          [alpha.id, other.id, anonymous.id].sort(),
        );
        expect(ids((await acme.search.search(words, { agentId: 'shared-agent', userId: 'u-1', mode, topK: 50 })).hits), mode).toEqual([alpha.id]);
        expect(ids((await acme.search.search(words, { agentId: 'shared-agent', userId: '', mode, topK: 50 })).hits), mode).toEqual([anonymous.id]);
        expect(ids((await acme.search.search(words, { agentId: 'someone-else', mode, topK: 50 })).hits), mode).toEqual([]);
        expect(ids((await acme.search.search(words, { agentId: 'shared-agent', conversationId: other.id, mode, topK: 50 })).hits), mode).toEqual([other.id]);
        expect(ids((await acme.search.search(words, { agentId: 'shared-agent', excludeConversationId: other.id, mode, topK: 50 })).hits), mode).toEqual(
          [alpha.id, anonymous.id].sort(),
        );
      }
      // Globex's writes leave acme's statistics (and so its scores) alone.
      const scores = async () => (await acme.search.search(words, { agentId: 'shared-agent', mode: 'text', topK: 50 })).hits.map((h) => h.score);
      const before = await scores();
      await globex.store.import(
        exported('shared-agent', [{ question: `${words} ${words}`, answer: 'Globex too.', at: '2025-02-02T00:00:00.000Z' }]),
        'shared-agent',
      );
      expect(await scores()).toEqual(before);
      // Nor can a tenant index another's conversation by its id.
      expect(await globex.index.indexConversation(alpha.id)).toBe(0);
      await expectIndexExact('acme');
      await expectIndexExact('globex');
    });

    it('rebuilds the BM25 index of a tenant whose postings another analyzer wrote, at start', async () => {
      const before = (await acme.search.search('beagle', { agentId: 'ana', mode: 'text' })).hits;
      expect(before.length).toBeGreaterThan(0);
      await db().execute(sql`UPDATE turn_corpus_stats SET analyzer_id = 'en-v0:other' WHERE tenant_id = 'acme'`);
      await expect(acme.search.search('beagle', { agentId: 'ana', mode: 'text' })).rejects.toThrow(/analyzer/i);
      const count = await queryRows<{ n: number }>(db(), sql`SELECT count(*)::int AS n FROM turns WHERE tenant_id = 'acme'`);
      expect(await reindexStaleTurns(db(), { batchSize: 3 })).toBe(Number(count[0]!.n));
      expect((await acme.search.search('beagle', { agentId: 'ana', mode: 'text' })).hits).toEqual(before);
      await expectIndexExact('acme');
      expect(await reindexStaleTurns(db())).toBe(0);
    });
  });
}
