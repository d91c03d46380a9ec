import { type SQL, sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { poolOf } from '../../../src/db/prepared-reads.js';
import { memories } from '../../../src/db/schema/index.js';
import type { Embedder } from '../../../src/embeddings/embedder.js';
import { defaultAnalyzer } from '../../../src/retrieval/bm25/analyzer.js';
import { bm25Candidates, queryTermCounts } from '../../../src/retrieval/bm25/bm25-candidates.js';
import { MEMORY_BM25 } from '../../../src/retrieval/bm25/bm25-index-tables.js';
import { MEMORY_CORPUS, memoryFilter } from '../../../src/memory/memory-corpus.js';
import type { MemoryFilter } from '../../../src/memory/memory-types.js';
import { DEFAULT_BM25_PARAMS } from '../../../src/retrieval/bm25/bm25.js';
import { filterToSql } from '../../../src/retrieval/filter-sql.js';
import { createPgMemoryStore } from '../../../src/memory/pg-memory-store.js';
import { createHashEmbedder } from '../../../testkit/hash-embedder.js';
import type { MemoryStoreFixture } from './memory-store-fixture.js';

/** Text search through BM25: filters inside the query, and postings kept exact. Registered inside the MemoryStore contract's `describe`. */
export function memoryStoreTextSearchCases(f: MemoryStoreFixture) {
  const { db, store, expectIndexExact, expectBm25LikeReference } = f;
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
    const vectorOnly = await blindStore.search('Quixley', { agentId, topK: 5, weights: { signals: { vector: 1, text: 0 } } });
    expect(vectorOnly.map((h) => h.memory.key)).not.toContain('order');
    // Nothing to embed in text mode; a query of stopwords alone finds nothing.
    expect(await blindStore.search('the of and', { agentId, mode: 'text' })).toEqual([]);
  });

  it('applies the agent and tag filters inside the BM25 query, before the LIMIT', async () => {
    const agentId = 'bm25-filters';
    // 60 short memories outrank the long rare-tagged ones, and another agent's outrank them all.
    for (let i = 0; i < 60; i++) await store().save({ agentId, key: `bulk${i}`, content: `zanzibar spice ${i}`, tags: ['bulk'] });
    for (let i = 0; i < 3; i++) {
      await store().save({ agentId, key: `rare${i}`, content: `a long note that mentions zanzibar once among many other words ${i}`, tags: ['rare', `r${i}`] });
    }
    await store().save({ agentId: 'bm25-other', key: 'x', content: 'zanzibar zanzibar zanzibar', tags: ['rare'] });
    for (const mode of ['text', 'hybrid'] as const) {
      const rare = await store().search('zanzibar', { agentId, mode, topK: 3, tagsAny: ['rare'] });
      expect(rare.map((h) => h.memory.key).sort(), mode).toEqual(['rare0', 'rare1', 'rare2']);
      const narrowed = await store().search('zanzibar', { agentId, mode, topK: 3, tagsAll: ['rare', 'r1'] });
      expect(
        narrowed.map((h) => h.memory.key),
        mode,
      ).toEqual(['rare1']);
      const excluded = await store().search('zanzibar', { agentId, mode, topK: 100, tagsNone: ['bulk'] });
      expect(excluded.map((h) => h.memory.key).sort(), mode).toEqual(['rare0', 'rare1', 'rare2']);
      const all = await store().search('zanzibar', { agentId, mode, topK: 100 });
      expect(all, mode).toHaveLength(63);
      expect(all.every((h) => h.memory.agentId === agentId)).toBe(true);
      // The rows BM25 found come with the text query, mapped as a read maps them.
      for (const hit of all.filter((h) => h.ranks.vector === null).slice(0, 5)) {
        expect(hit.memory, mode).toEqual(await store().get(hit.memory.key, { agentId }));
      }
    }
    await expectBm25LikeReference(agentId, ['zanzibar', 'zanzibar spice', 'note words 2']);
  });

  it('gives the same BM25 page whether the filter is tested down the score order or joined at once', async () => {
    const agentId = 'bm25-walk';
    // The 40 best-scored memories fail `tagsNone: ['top']`: a walk down the score order must go past them.
    for (let i = 0; i < 40; i++) await store().save({ agentId, key: `top${i}`, content: `quokka quokka ${i}`, tags: ['top'] });
    for (let i = 0; i < 30; i++)
      await store().save({ agentId, key: `low${i}`, content: `a quokka among other words in a longer note ${i}`, tags: [i % 3 ? 'low' : 'third'] });
    const search = (filter: MemoryFilter, estimate: SQL | undefined) =>
      bm25Candidates(db(), MEMORY_BM25, 'default', {
        terms: queryTermCounts(defaultAnalyzer.analyze('quokka note')),
        limit: 12,
        params: DEFAULT_BM25_PARAMS,
        analyzerId: defaultAnalyzer.id,
        shape: {
          table: memories,
          idColumn: memories.id,
          where: filterToSql(memoryFilter('default', { agentId, ...filter }), MEMORY_CORPUS.filters),
          ...(estimate ? { estimate } : {}),
        },
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

  it('runs a statement built once for its key with each query’s own terms', async () => {
    const agentId = 'bm25-keyed';
    for (let i = 0; i < 6; i++) await store().save({ agentId, key: `k${i}`, content: i % 2 ? `walrus ${i}` : `narwhal narwhal ${i}`, tags: ['sea'] });
    const onServer = poolOf(db()) !== undefined;
    // Estimated (a plan for any values), and counted in the statement (planned for its values, its
    // terms' count among them): both built once for a key on the server.
    for (const estimate of [sql`1e12`, undefined]) {
      let made = 0;
      const shape = () => ({
        table: memories,
        idColumn: memories.id,
        where: filterToSql(memoryFilter('default', { agentId, tagsAny: ['sea'] }), MEMORY_CORPUS.filters),
        narrows: true,
        ...(estimate ? { estimate } : {}),
      });
      const search = (query: string, key?: string) =>
        bm25Candidates(db(), MEMORY_BM25, 'default', {
          terms: queryTermCounts(defaultAnalyzer.analyze(query)),
          limit: 10,
          params: DEFAULT_BM25_PARAMS,
          analyzerId: defaultAnalyzer.id,
          shape: key ? { key, make: () => (made++, shape()) } : shape(),
        });
      const key = `test\u0000${agentId}\u0000${estimate ? 'estimated' : 'counted'}`;
      const queries = ['walrus', 'narwhal', 'walrus narwhal', 'walrus'];
      for (const query of queries) {
        const keyed = await search(query, key);
        expect(keyed, query).toEqual(await search(query));
        expect(keyed.length, query).toBe(query.includes(' ') ? 6 : 3);
      }
      expect(made).toBe(onServer ? 1 : queries.length);
    }
  });

  it('keeps postings and statistics exact through saves, updates, deletes and concurrent writers', async () => {
    const agentId = 'bm25-exact';
    await store().save({ agentId, key: 'a', content: 'Vitamin D deficiency is associated with bone fractures.', tags: ['health'] });
    await store().save({ agentId, key: 'b', content: 'Bone density and fractures: calcium and vitamin intake.', tags: ['health', 'old'] });
    await store().save({ agentId, key: 'c', content: 'The quick brown fox jumps over the lazy dog; the dog sleeps.', tags: ['animals'] });
    await store().save({ agentId, key: 'd', content: 'Smokers smoke; infection rates among smokers rise.', tags: ['old'] });
    await expectIndexExact();
    await expectBm25LikeReference(agentId, ['vitamin fractures', 'dog dog fox', 'smokers infections']);

    // Content changed: postings replaced. Unchanged: tags only, postings untouched.
    await store().save({ agentId, key: 'c', content: 'A fox and a second fox chase a rabbit.', tags: ['animals'] });
    await store().save({ agentId, key: 'a', content: 'Vitamin D deficiency is associated with bone fractures.', tags: ['retagged'] });
    await expectIndexExact();
    await expectBm25LikeReference(agentId, ['fox rabbit', 'dog', 'vitamin']);
    expect((await store().search('dog', { agentId, mode: 'text' })).map((h) => h.memory.key)).toEqual([]);

    expect(await store().delete('d', { agentId })).toBe(true);
    expect(await store().delete('d', { agentId })).toBe(false);
    await expectIndexExact();
    expect(await store().deleteByTags({ agentId, tagsAny: ['old'] })).toBe(1);
    await expectIndexExact();
    await expectBm25LikeReference(agentId, ['vitamin bone fractures', 'smokers', 'fox']);

    // Writers racing on the same keys, new keys and deletes: serialised by the corpus lock.
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 12; i++) {
      writes.push(store().save({ agentId, key: `race${i % 4}`, content: `racing writer ${i} saves word${i % 3} and word${i % 5}`, tags: [`t${i % 2}`] }));
      writes.push(store().save({ agentId, key: `new${i}`, content: `fresh memory ${i} about word${i % 3}` }));
      if (i % 3 === 0) writes.push(store().delete(`new${i - 3}`, { agentId }));
      if (i === 6) writes.push(store().deleteByTags({ agentId, tagsAny: ['t1'] }));
      if (i % 4 === 1) writes.push(store().save({ agentId, key: 'a', content: `Vitamin D deficiency ${i}`, tags: ['health'] }));
    }
    await Promise.all(writes);
    await expectIndexExact();
    await expectBm25LikeReference(agentId, ['word0 word1', 'racing writer', 'fresh memory word2', 'vitamin deficiency']);
  });
}
