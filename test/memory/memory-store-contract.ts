import { type SQL, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { memories } from '../../src/db/schema/index.js';
import { VectorSpaceMismatchError, ensureVectorSpace } from '../../src/db/vector-space.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { createAnalyzer, defaultAnalyzer } from '../../src/retrieval/bm25/analyzer.js';
import { MEMORY_BM25, bm25Candidates, queryTermCounts } from '../../src/retrieval/bm25/bm25-index.js';
import { InMemoryBm25Index } from '../../src/retrieval/bm25/bm25.js';
import { AnalyzerMismatchError } from '../../src/retrieval/analyzer-mismatch-error.js';
import { InvalidCursorError } from '../../src/retrieval/cursor.js';
import { indexUnindexedMemories } from '../../src/memory/memory-text-index.js';
import { MEMORY_CORPUS, memoryFilter } from '../../src/memory/memory-corpus.js';
import type { MemoryFilter, MemoryStore } from '../../src/memory/memory-types.js';
import { DEFAULT_BM25_PARAMS } from '../../src/retrieval/bm25/bm25.js';
import { filterToSql } from '../../src/retrieval/filter-sql.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { clusteredVectors, cosine, createTableEmbedder, seededRandom } from '../../testkit/vector-fixtures.js';
import type { DatabaseDriver } from '../support/database-drivers.js';

/** The MemoryStore contract, run by describeOnDrivers on an empty, migrated database of its own. */
export function memoryStoreContract(driver: DatabaseDriver) {
  describe('MemoryStore contract', () => {
    let database: Database | undefined;
    const embedder = createHashEmbedder(64);
    let store: MemoryStore;

    beforeAll(async () => {
      database = await driver.open();
      await ensureVectorSpace(database.db, embedder);
      store = createPgMemoryStore({ db: database.db, embedder });
    });
    afterAll(async () => {
      await database?.close();
    });
    const db = () => database!.db;

    /**
     * The BM25 index kept incrementally must equal one rebuilt from the memories' content:
     * postings, document frequencies, lengths and totals.
     */
    async function expectIndexExact() {
      const rows = await queryRows<{ id: string; content: string; bm25_length: number | null }>(
        db(),
        sql`SELECT id::text AS id, content, bm25_length FROM memories ORDER BY id`,
      );
      const expectedPostings: string[] = [];
      const df = new Map<string, number>();
      let totalLength = 0;
      for (const row of rows) {
        const frequencies = defaultAnalyzer.termFrequencies(row.content);
        let length = 0;
        for (const tf of frequencies.values()) length += tf;
        for (const [term, tf] of frequencies) {
          // Each posting carries its row's length: the search scores from the postings alone.
          expectedPostings.push(`${row.id} ${term} ${tf} ${length}`);
          df.set(term, (df.get(term) ?? 0) + 1);
        }
        expect(row.bm25_length, `bm25_length of ${row.content}`).toBe(length);
        totalLength += length;
      }
      const postings = await queryRows<{ p: string }>(
        db(),
        sql`SELECT memory_id::text || ' ' || term || ' ' || tf || ' ' || doc_length AS p FROM memory_postings`,
      );
      expect(postings.map((r) => r.p).sort()).toEqual(expectedPostings.sort());
      const terms = await queryRows<{ term: string; df: number }>(db(), sql`SELECT term, df FROM memory_term_stats`);
      expect(new Map(terms.map((r) => [r.term, Number(r.df)]))).toEqual(df);
      const [corpus] = await queryRows<{ total: string; total_length: string; analyzer_id: string }>(
        db(),
        sql`SELECT total, total_length, analyzer_id FROM memory_corpus_stats WHERE tenant_id = 'default'`,
      );
      expect({ total: Number(corpus?.total ?? 0), totalLength: Number(corpus?.total_length ?? 0) }).toEqual({ total: rows.length, totalLength });
      if (corpus) expect(corpus.analyzer_id).toBe(defaultAnalyzer.id);
    }

    /** Text search must give the in-memory reference's hits and scores (statistics over every agent). */
    async function expectBm25LikeReference(agentId: string, queries: string[]) {
      const rows = await queryRows<{ agent_id: string; key: string; content: string }>(db(), sql`SELECT agent_id, key, content FROM memories`);
      const reference = new InMemoryBm25Index();
      for (const row of rows) reference.add(`${row.agent_id}/${row.key}`, row.content);
      for (const query of queries) {
        const expected = reference.search(query, { topK: 10_000 }).filter((h) => h.id.startsWith(`${agentId}/`));
        const actual = await store.search(query, { agentId, mode: 'text', topK: 100 });
        expect(actual.map((h) => `${h.memory.agentId}/${h.memory.key}`).sort(), query).toEqual(expected.map((h) => h.id).sort());
        const scores = new Map(expected.map((h) => [h.id, h.score]));
        for (const hit of actual) expect(Math.abs(hit.score - scores.get(`${hit.memory.agentId}/${hit.memory.key}`)!)).toBeLessThan(1e-6);
        expect(actual.map((h) => h.score)).toEqual([...actual.map((h) => h.score)].sort((a, b) => b - a));
        expect(actual.map((h) => h.ranks.text)).toEqual(actual.map((_, i) => i + 1));
      }
    }

    it('saves, gets and deletes a memory', async () => {
      const saved = await store.save({ key: 'k1', content: 'Alice likes green tea', tags: ['Pref'], metadata: { source: 'chat' } });
      expect(saved.created).toBe(true);
      expect(saved.reembedded).toBe(true);
      expect(saved.memory).toMatchObject({ key: 'k1', content: 'Alice likes green tea', tags: ['pref'], metadata: { source: 'chat' }, agentId: 'default' });
      expect(await store.get('k1')).toMatchObject({ key: 'k1', content: 'Alice likes green tea' });
      expect(await store.delete('k1')).toBe(true);
      expect(await store.delete('k1')).toBe(false);
      expect(await store.get('k1')).toBeNull();
    });

    it('upserts by (agent, key) and re-embeds only when the content changed', async () => {
      await store.save({ key: 'up', content: 'first version' });
      const before = embedder.texts;
      const same = await store.save({ key: 'up', content: 'first version', tags: ['x'] });
      expect(same).toMatchObject({ created: false, reembedded: false });
      expect(same.memory.tags).toEqual(['x']);
      expect(embedder.texts).toBe(before);
      const changed = await store.save({ key: 'up', content: 'second version' });
      expect(changed).toMatchObject({ created: false, reembedded: true });
      expect(embedder.texts).toBe(before + 1);
      expect(changed.memory.updatedAt.getTime()).toBeGreaterThanOrEqual(changed.memory.createdAt.getTime());
      const [hit] = await store.search('second version', { topK: 1, mode: 'vector' });
      expect(hit?.memory.key).toBe('up');
      expect(hit!.score).toBeCloseTo(1, 5);
    });

    it('normalises tags: trimmed, case-folded, deduplicated', async () => {
      const { memory } = await store.save({ key: 'tags', content: 'tag normalisation', tags: ['  Work ', 'WORK', 'Ünïcode', ''], agentId: 'tagger' });
      expect(memory.tags).toEqual(['work', 'ünïcode']);
      const hits = await store.search('tag normalisation', { agentId: 'tagger', tagsAll: [' WORK'] });
      expect(hits.map((h) => h.memory.key)).toEqual(['tags']);
    });

    it('keeps agents apart', async () => {
      await store.save({ key: 'same', content: 'agent one secret', agentId: 'one' });
      await store.save({ key: 'same', content: 'agent two secret', agentId: 'two' });
      expect((await store.get('same', { agentId: 'one' }))?.content).toBe('agent one secret');
      expect((await store.get('same', { agentId: 'two' }))?.content).toBe('agent two secret');
      const hits = await store.search('secret', { agentId: 'one', topK: 10 });
      expect(hits.map((h) => h.memory.content)).toEqual(['agent one secret']);
    });

    it('filters by tagsAny, tagsAll and tagsNone inside the query', async () => {
      const agentId = 'filters';
      await store.save({ agentId, key: 'a', content: 'apple pie recipe', tags: ['food', 'dessert'] });
      await store.save({ agentId, key: 'b', content: 'apple stock price', tags: ['finance'] });
      await store.save({ agentId, key: 'c', content: 'apple orchard visit', tags: ['food', 'travel'] });
      const keys = async (o: object) => (await store.search('apple', { agentId, topK: 10, ...o })).map((h) => h.memory.key).sort();
      expect(await keys({})).toEqual(['a', 'b', 'c']);
      expect(await keys({ tagsAny: ['finance', 'travel'] })).toEqual(['b', 'c']);
      expect(await keys({ tagsAll: ['food', 'travel'] })).toEqual(['c']);
      expect(await keys({ tagsNone: ['food'] })).toEqual(['b']);
      expect(await keys({ tagsAny: ['food'], tagsNone: ['dessert'] })).toEqual(['c']);
      expect(await keys({ tagsAny: ['nope'] })).toEqual([]);
    });

    it('orders hits by score and honours minScore', async () => {
      const agentId = 'scores';
      await store.save({ agentId, key: 'exact', content: 'red fox jumps' });
      await store.save({ agentId, key: 'partial', content: 'red car parks' });
      await store.save({ agentId, key: 'none', content: 'blue whale sings' });
      const hits = await store.search('red fox jumps', { agentId, topK: 3 });
      expect(hits[0]?.memory.key).toBe('exact');
      for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
      const strict = await store.search('red fox jumps', { agentId, minScore: 0.99, mode: 'vector' });
      expect(strict.map((h) => h.memory.key)).toEqual(['exact']);
      // In hybrid mode minScore bounds the vector side only: "red" still finds the car by BM25.
      const hybrid = await store.search('red fox jumps', { agentId, minScore: 0.99 });
      expect(hybrid.map((h) => [h.memory.key, h.ranks])).toEqual([
        ['exact', { vector: 1, text: 1 }],
        ['partial', { vector: null, text: 2 }],
      ]);
    });

    it('lists with cursor pagination, each memory exactly once', async () => {
      const agentId = 'pager';
      for (let i = 0; i < 23; i++) await store.save({ agentId, key: `p${i}`, content: `page item ${i}`, tags: i % 2 ? ['odd'] : ['even'] });
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.list({ agentId, limit: 5, cursor });
        seen.push(...page.items.map((m) => m.key));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(seen).toHaveLength(23);
      expect(new Set(seen).size).toBe(23);
      const odd = await store.list({ agentId, tagsAny: ['odd'], limit: 100 });
      expect(odd.items).toHaveLength(11);
      expect(odd.nextCursor).toBeNull();
      await expect(store.list({ agentId, cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(InvalidCursorError);
    });

    it('counts tags and deletes by tag', async () => {
      const agentId = 'tagcount';
      await store.save({ agentId, key: '1', content: 'one', tags: ['a', 'b'] });
      await store.save({ agentId, key: '2', content: 'two', tags: ['a'] });
      await store.save({ agentId, key: '3', content: 'three', tags: ['c'] });
      expect(await store.tagCounts({ agentId })).toEqual([
        { tag: 'a', count: 2 },
        { tag: 'b', count: 1 },
        { tag: 'c', count: 1 },
      ]);
      await expect(store.deleteByTags({ agentId, tagsNone: ['a'] })).rejects.toThrow(RangeError);
      expect(await store.deleteByTags({ agentId, tagsAny: ['A'] })).toBe(2);
      expect((await store.list({ agentId })).items.map((m) => m.key)).toEqual(['3']);
    });

    it('stores tags and keys that look like SQL or array syntax verbatim', async () => {
      const agentId = 'quoting';
      const tags = ['a,b', '{x}', 'quote"d', "o'reilly", 'back\\slash', "'); DROP TABLE memories; --"];
      await store.save({ agentId, key: "k'; --", content: 'odd tags', tags });
      const hits = await store.search('odd tags', { agentId, tagsAll: tags });
      expect(hits).toHaveLength(1);
      expect(hits[0]!.memory.tags.sort()).toEqual(tags.map((t) => t.toLowerCase()).sort());
      expect(await store.get("k'; --", { agentId })).not.toBeNull();
    });

    it('finds a rare name or number by text and hybrid search where the vector side cannot', async () => {
      const agentId = 'rare-words';
      // The memory holding the name lies orthogonal to every query, behind 60 memories that sit on it.
      const axis = (i: number) => Array.from({ length: 64 }, (_, j) => (j === i ? 1 : 0));
      const blind: Embedder = { ...createHashEmbedder(64), embed: async (texts) => texts.map((t) => (t.includes('Mr Quixley ships') ? axis(0) : axis(1))) };
      const blindStore = createPgMemoryStore({ db: db(), embedder: blind });
      for (let i = 0; i < 60; i++) await blindStore.save({ agentId, key: `filler${i}`, content: `Filler note ${i} about the weekly meeting` });
      await blindStore.save({ agentId, key: 'order', content: 'Order 4471-B for Mr Quixley ships on Friday' });

      const vector = await blindStore.search('Quixley', { agentId, mode: 'vector', topK: 5 });
      expect(vector.map((h) => h.memory.key)).not.toContain('order');
      for (const query of ['Quixley', 'order 4471', 'who is quixley?']) {
        const text = await blindStore.search(query, { agentId, mode: 'text', topK: 5 });
        expect(text[0]).toMatchObject({ memory: { key: 'order' }, ranks: { vector: null, text: 1 } });
        expect(text[0]!.score).toBeGreaterThan(0);
        const hybrid = await blindStore.search(query, { agentId, topK: 5 });
        expect(hybrid).toHaveLength(5);
        expect(hybrid[0]).toMatchObject({ memory: { key: 'order' }, ranks: { vector: null, text: 1 } });
        for (const hit of hybrid.slice(1)) expect(hit.ranks.vector).not.toBeNull();
      }
      // Weights per query: with the text side weighted 0 the keyword-only hit falls behind the vector ranks.
      const vectorOnly = await blindStore.search('Quixley', { agentId, topK: 5, weights: { vector: 1, text: 0 } });
      expect(vectorOnly.map((h) => h.memory.key)).not.toContain('order');
      // Nothing to embed in text mode; a query of stopwords alone finds nothing.
      expect(await blindStore.search('the of and', { agentId, mode: 'text' })).toEqual([]);
    });

    it('applies the agent and tag filters inside the BM25 query, before the LIMIT', async () => {
      const agentId = 'bm25-filters';
      // 60 short memories outrank the long rare-tagged ones, and another agent's outrank them all.
      for (let i = 0; i < 60; i++) await store.save({ agentId, key: `bulk${i}`, content: `zanzibar spice ${i}`, tags: ['bulk'] });
      for (let i = 0; i < 3; i++) {
        await store.save({ agentId, key: `rare${i}`, content: `a long note that mentions zanzibar once among many other words ${i}`, tags: ['rare', `r${i}`] });
      }
      await store.save({ agentId: 'bm25-other', key: 'x', content: 'zanzibar zanzibar zanzibar', tags: ['rare'] });
      for (const mode of ['text', 'hybrid'] as const) {
        const rare = await store.search('zanzibar', { agentId, mode, topK: 3, tagsAny: ['rare'] });
        expect(rare.map((h) => h.memory.key).sort(), mode).toEqual(['rare0', 'rare1', 'rare2']);
        const narrowed = await store.search('zanzibar', { agentId, mode, topK: 3, tagsAll: ['rare', 'r1'] });
        expect(
          narrowed.map((h) => h.memory.key),
          mode,
        ).toEqual(['rare1']);
        const excluded = await store.search('zanzibar', { agentId, mode, topK: 100, tagsNone: ['bulk'] });
        expect(excluded.map((h) => h.memory.key).sort(), mode).toEqual(['rare0', 'rare1', 'rare2']);
        const all = await store.search('zanzibar', { agentId, mode, topK: 100 });
        expect(all, mode).toHaveLength(63);
        expect(all.every((h) => h.memory.agentId === agentId)).toBe(true);
        // The rows BM25 found come with the text query, mapped as a read maps them.
        for (const hit of all.filter((h) => h.ranks.vector === null).slice(0, 5)) {
          expect(hit.memory, mode).toEqual(await store.get(hit.memory.key, { agentId }));
        }
      }
      await expectBm25LikeReference(agentId, ['zanzibar', 'zanzibar spice', 'note words 2']);
    });

    it('gives the same BM25 page whether the filter is tested down the score order or joined at once', async () => {
      const agentId = 'bm25-walk';
      // The 40 best-scored memories fail `tagsNone: ['top']`: a walk down the score order must go past them.
      for (let i = 0; i < 40; i++) await store.save({ agentId, key: `top${i}`, content: `quokka quokka ${i}`, tags: ['top'] });
      for (let i = 0; i < 30; i++)
        await store.save({ agentId, key: `low${i}`, content: `a quokka among other words in a longer note ${i}`, tags: [i % 3 ? 'low' : 'third'] });
      const search = (filter: MemoryFilter, estimate: SQL | undefined) =>
        bm25Candidates(db(), MEMORY_BM25, 'default', {
          terms: queryTermCounts(defaultAnalyzer.analyze('quokka note')),
          table: memories,
          idColumn: memories.id,
          where: filterToSql(memoryFilter('default', { agentId, ...filter }), MEMORY_CORPUS.filters),
          estimate,
          limit: 12,
          params: DEFAULT_BM25_PARAMS,
          analyzerId: defaultAnalyzer.id,
        });
      const cases: [MemoryFilter, number][] = [
        [{}, 12],
        [{ tagsNone: ['top'] }, 12],
        [{ tagsAny: ['third'] }, 10],
        [{ tagsAll: ['low'] }, 12],
        [{ tagsAny: ['none-such'] }, 0],
      ];
      for (const [filter, found] of cases) {
        const planned = await search(filter, undefined);
        expect(planned, JSON.stringify(filter)).toHaveLength(found);
        // An estimate past every row walks down the score order; one of 0 joins the matching rows at once.
        expect(await search(filter, sql`1e12`), JSON.stringify(filter)).toEqual(planned);
        expect(await search(filter, sql`0`), JSON.stringify(filter)).toEqual(planned);
      }
      const past = await search({ tagsNone: ['top'] }, sql`1e12`);
      expect(past.every((hit) => !hit.id.startsWith('top'))).toBe(true);
    });

    it('keeps postings and statistics exact through saves, updates, deletes and concurrent writers', async () => {
      const agentId = 'bm25-exact';
      await store.save({ agentId, key: 'a', content: 'Vitamin D deficiency is associated with bone fractures.', tags: ['health'] });
      await store.save({ agentId, key: 'b', content: 'Bone density and fractures: calcium and vitamin intake.', tags: ['health', 'old'] });
      await store.save({ agentId, key: 'c', content: 'The quick brown fox jumps over the lazy dog; the dog sleeps.', tags: ['animals'] });
      await store.save({ agentId, key: 'd', content: 'Smokers smoke; infection rates among smokers rise.', tags: ['old'] });
      await expectIndexExact();
      await expectBm25LikeReference(agentId, ['vitamin fractures', 'dog dog fox', 'smokers infections']);

      // Content changed: postings replaced. Unchanged: tags only, postings untouched.
      await store.save({ agentId, key: 'c', content: 'A fox and a second fox chase a rabbit.', tags: ['animals'] });
      await store.save({ agentId, key: 'a', content: 'Vitamin D deficiency is associated with bone fractures.', tags: ['retagged'] });
      await expectIndexExact();
      await expectBm25LikeReference(agentId, ['fox rabbit', 'dog', 'vitamin']);
      expect((await store.search('dog', { agentId, mode: 'text' })).map((h) => h.memory.key)).toEqual([]);

      expect(await store.delete('d', { agentId })).toBe(true);
      expect(await store.delete('d', { agentId })).toBe(false);
      await expectIndexExact();
      expect(await store.deleteByTags({ agentId, tagsAny: ['old'] })).toBe(1);
      await expectIndexExact();
      await expectBm25LikeReference(agentId, ['vitamin bone fractures', 'smokers', 'fox']);

      // Writers racing on the same keys, new keys and deletes: serialised by the corpus lock.
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < 12; i++) {
        writes.push(store.save({ agentId, key: `race${i % 4}`, content: `racing writer ${i} saves word${i % 3} and word${i % 5}`, tags: [`t${i % 2}`] }));
        writes.push(store.save({ agentId, key: `new${i}`, content: `fresh memory ${i} about word${i % 3}` }));
        if (i % 3 === 0) writes.push(store.delete(`new${i - 3}`, { agentId }));
        if (i === 6) writes.push(store.deleteByTags({ agentId, tagsAny: ['t1'] }));
        if (i % 4 === 1) writes.push(store.save({ agentId, key: 'a', content: `Vitamin D deficiency ${i}`, tags: ['health'] }));
      }
      await Promise.all(writes);
      await expectIndexExact();
      await expectBm25LikeReference(agentId, ['word0 word1', 'racing writer', 'fresh memory word2', 'vitamin deficiency']);
    });

    it('re-embeds outside the transaction when the content changed between its read and the save', async () => {
      const agentId = 'raced';
      await store.save({ agentId, key: 'k', content: 'original words here' });
      // Another writer's update lands after the save read the row, before its transaction starts
      // (written as the store would: the index follows the content).
      let raced = false;
      const racingDb = new Proxy(db(), {
        get(target, prop, receiver) {
          if (prop !== 'transaction' || raced) return Reflect.get(target, prop, receiver);
          raced = true;
          return async (...args: unknown[]) => {
            await store.save({ agentId, key: 'k', content: 'changed meanwhile' });
            return (target.transaction as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          };
        },
      });
      const racingStore = createPgMemoryStore({ db: racingDb, embedder });
      const texts = embedder.texts;
      const saved = await racingStore.save({ agentId, key: 'k', content: 'original words here', tags: ['kept'] });
      expect(raced).toBe(true);
      expect(saved).toMatchObject({ created: false, reembedded: true, memory: { content: 'original words here', tags: ['kept'] } });
      // One embedding for the other writer, one for ours after the retry.
      expect(embedder.texts).toBe(texts + 2);
      await expectIndexExact();
      expect((await store.search('original', { agentId, mode: 'text' })).map((h) => h.memory.key)).toEqual(['k']);
      expect(await store.search('meanwhile', { agentId, mode: 'text' })).toEqual([]);
    });

    it('indexes memories saved before the BM25 index existed, and rebuilds after an analyzer change', async () => {
      const agentId = 'legacy';
      // Rows as the migration leaves them: bm25_length NULL, no postings.
      const contents = ['Legacy memory about Ingrid Halvorsen', 'Parking spot 7G-118 at the depot', 'Old note on glacier tours', 'Unrelated'];
      const vectors = await embedder.embed(contents);
      await db()
        .insert(memories)
        .values(contents.map((content, i) => ({ agentId, key: `old${i}`, content, embedding: vectors[i]! })));
      expect(await store.search('Halvorsen', { agentId, mode: 'text' })).toEqual([]);
      const [before] = await queryRows<{ total: string }>(db(), sql`SELECT total FROM memory_corpus_stats`);

      const progress: number[] = [];
      const result = await indexUnindexedMemories(db(), { batchSize: 3, onProgress: (n) => progress.push(n) });
      expect(result).toEqual({ indexed: 4, rebuilt: false });
      expect(progress).toEqual([3, 4]);
      await expectIndexExact();
      const [after] = await queryRows<{ total: string }>(db(), sql`SELECT total FROM memory_corpus_stats`);
      expect(Number(after!.total)).toBe(Number(before?.total ?? 0) + 4);
      expect((await store.search('Halvorsen', { agentId, mode: 'text' })).map((h) => h.memory.key)).toEqual(['old0']);
      expect((await store.search('7G-118 parking', { agentId })).map((h) => h.memory.key)[0]).toBe('old1');
      expect(await indexUnindexedMemories(db())).toEqual({ indexed: 0, rebuilt: false });
      const [{ updated } = { updated: false }] = await queryRows<{ updated: boolean }>(
        db(),
        sql`SELECT bool_or(updated_at <> created_at) AS updated FROM memories WHERE agent_id = ${agentId}`,
      );
      expect(updated).toBe(false);

      // A save of unchanged content indexes a row the start-up pass has not reached yet.
      await db()
        .insert(memories)
        .values({ agentId, key: 'late', content: 'Late legacy row about Ottoline', embedding: (await embedder.embed(['x']))[0]! });
      await store.save({ agentId, key: 'late', content: 'Late legacy row about Ottoline' });
      await expectIndexExact();
      expect((await store.search('Ottoline', { agentId, mode: 'text' })).map((h) => h.memory.key)).toEqual(['late']);

      // Postings of another analyzer are dropped and every memory re-indexed; this store then refuses to write.
      const [{ n }] = (await queryRows<{ n: number }>(db(), sql`SELECT count(*)::int AS n FROM memories`)) as [{ n: number }];
      const unstemmed = createAnalyzer({ stem: false });
      expect(await indexUnindexedMemories(db(), { analyzer: unstemmed })).toEqual({ indexed: Number(n), rebuilt: true });
      await expect(store.save({ agentId, key: 'refused', content: 'written by the wrong analyzer' })).rejects.toBeInstanceOf(AnalyzerMismatchError);
      await expect(store.search('Halvorsen', { agentId, mode: 'text' })).rejects.toBeInstanceOf(AnalyzerMismatchError);
      const unstemmedStore = createPgMemoryStore({ db: db(), embedder, analyzer: unstemmed });
      expect((await unstemmedStore.search('tours', { agentId, mode: 'text' })).map((h) => h.memory.key)).toEqual(['old2']);
      expect(await unstemmedStore.search('tour', { agentId, mode: 'text' })).toEqual([]);
      expect(await indexUnindexedMemories(db())).toEqual({ indexed: Number(n), rebuilt: true });
      await expectIndexExact();
    });

    it('refuses to start with another embedder on a store that holds vectors', async () => {
      await store.save({ key: 'vs', content: 'vector space guard' });
      const other = createHashEmbedder(32, 'test:other-32');
      const err = await ensureVectorSpace(database!.db, other).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(VectorSpaceMismatchError);
      expect(String((err as Error).message)).toContain('test:hash-64');
      expect(String((err as Error).message)).toContain('test:other-32');
      // The same embedder is accepted again.
      await ensureVectorSpace(database!.db, embedder);
    });
  });
}

/**
 * 20k hand-made vectors with a 10% and a 0.2% tag: a filtered search must return `topK` rows
 * and the true nearest neighbours, through the exact path, the iterative index path, and both.
 */
export function filteredSearchAtScale(driver: DatabaseDriver) {
  describe('filtered vector search on 20k memories', () => {
    const N = 20_000;
    const DIMS = 32;
    const vectors = clusteredVectors(N, DIMS, 7);
    const rand = seededRandom(99);
    const queries = clusteredVectors(10, DIMS, 12345);
    const table = new Map(queries.map((q, i) => [`q${i}`, q]));
    const embedder = createTableEmbedder(DIMS, table);
    const tagsOf = (i: number) => [...(i % 10 === 3 ? ['common'] : []), ...(i % 500 === 17 ? ['rare'] : [])];
    let database: Database;

    beforeAll(async () => {
      database = await driver.open();
      await ensureVectorSpace(database.db, embedder);
      for (let start = 0; start < N; start += 1000) {
        const rows = vectors.slice(start, start + 1000).map((embedding, j) => {
          const i = start + j;
          // The same split in metadata: a metadata filter must keep the tags' guarantee.
          const metadata = { project: tagsOf(i).includes('rare') ? 'rare-project' : 'other', priority: i % 5 };
          return { agentId: 'scale', key: `m${i}`, content: `memory ${i} ${rand()}`, tags: tagsOf(i), metadata, embedding };
        });
        await database.db.insert(memories).values(rows);
      }
      await database.db.execute(sql`ANALYZE memories`);
    }, 600_000);
    afterAll(async () => {
      await database?.close();
    });

    const truth = (query: number[], tag: string, k: number) =>
      vectors
        .map((v, i) => ({ i, s: cosine(v, query) }))
        .filter(({ i }) => tagsOf(i).includes(tag))
        .sort((a, b) => b.s - a.s)
        .slice(0, k)
        .map(({ i }) => `m${i}`);

    const recall = (got: string[], want: string[]) => got.filter((k) => want.includes(k)).length / want.length;

    for (const [path, exactScanMaxRows] of [
      ['default thresholds', undefined],
      ['index only (no exact scan for few matches)', 0],
      ['exact scan for every filter', 1_000_000],
    ] as const) {
      it(`returns topK rows for the 0.2% and the 10% tag: ${path}`, async () => {
        const store = createPgMemoryStore({ db: database.db, embedder, exactScanMaxRows });
        let rareRecall = 0;
        let commonRecall = 0;
        for (let q = 0; q < queries.length; q++) {
          const rare = await store.search(`q${q}`, { agentId: 'scale', tagsAny: ['rare'], topK: 10, mode: 'vector' });
          expect(rare).toHaveLength(10);
          expect(rare.every((h) => h.memory.tags.includes('rare'))).toBe(true);
          rareRecall += recall(
            rare.map((h) => h.memory.key),
            truth(queries[q]!, 'rare', 10),
          );
          // The 0.2% again, by metadata: equality and a range, inside the query before the LIMIT.
          const byMetadata = await store.search(`q${q}`, {
            agentId: 'scale',
            metadata: {
              and: [
                { key: 'project', op: 'eq', value: 'rare-project' },
                { key: 'priority', op: 'gte', value: 0 },
              ],
            },
            topK: 10,
            mode: 'vector',
          });
          expect(byMetadata.map((h) => h.memory.key).sort()).toEqual(rare.map((h) => h.memory.key).sort());
          const common = await store.search(`q${q}`, { agentId: 'scale', tagsAll: ['common'], topK: 10, mode: 'vector' });
          expect(common).toHaveLength(10);
          expect(common.every((h) => h.memory.tags.includes('common'))).toBe(true);
          commonRecall += recall(
            common.map((h) => h.memory.key),
            truth(queries[q]!, 'common', 10),
          );
        }
        expect(rareRecall / queries.length).toBeGreaterThanOrEqual(0.9);
        expect(commonRecall / queries.length).toBeGreaterThanOrEqual(0.9);
      });
    }

    it('returns every match when fewer than topK rows match', async () => {
      const store = createPgMemoryStore({ db: database.db, embedder, exactScanMaxRows: 0 });
      const hits = await store.search('q0', { agentId: 'scale', tagsAll: ['rare', 'common'], topK: 100, mode: 'vector' });
      const expected = Array.from({ length: N }, (_, i) => i).filter((i) => tagsOf(i).includes('rare') && tagsOf(i).includes('common'));
      expect(hits.map((h) => h.memory.key).sort()).toEqual(expected.map((i) => `m${i}`).sort());
    });
  });
}
