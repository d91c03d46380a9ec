import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { memories } from '../../src/db/schema.js';
import { VectorSpaceMismatchError, ensureVectorSpace } from '../../src/db/vector-space.js';
import { InvalidCursorError } from '../../src/memory/cursor.js';
import type { MemoryStore } from '../../src/memory/memory-types.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { createHashEmbedder } from '../support/hash-embedder.js';
import { clusteredVectors, cosine, createTableEmbedder, seededRandom } from '../support/vector-fixtures.js';

/**
 * The MemoryStore contract, run against each driver. `open` returns an empty, migrated database
 * of its own; `drop` (if any) releases it.
 */
export function memoryStoreContract(name: string, open: () => Promise<Database | { skipReason: string }>) {
  describe(`MemoryStore contract (${name})`, () => {
    let database: Database | undefined;
    let skipReason: string | undefined;
    const embedder = createHashEmbedder(64);
    let store: MemoryStore;

    beforeAll(async () => {
      const opened = await open();
      if ('skipReason' in opened) {
        skipReason = opened.skipReason;
        console.warn(`[${name}] skipped: ${skipReason}`);
        return;
      }
      database = opened;
      await ensureVectorSpace(database.db, embedder);
      store = createPgMemoryStore({ db: database.db, embedder });
    });
    afterAll(async () => {
      await database?.close();
    });

    const live = () => database !== undefined;

    it('saves, gets and deletes a memory', async ({ skip }) => {
      if (!live()) return skip(skipReason);
      const saved = await store.save({ key: 'k1', content: 'Alice likes green tea', tags: ['Pref'], metadata: { source: 'chat' } });
      expect(saved.created).toBe(true);
      expect(saved.reembedded).toBe(true);
      expect(saved.memory).toMatchObject({ key: 'k1', content: 'Alice likes green tea', tags: ['pref'], metadata: { source: 'chat' }, agentId: 'default' });
      expect(await store.get('k1')).toMatchObject({ key: 'k1', content: 'Alice likes green tea' });
      expect(await store.delete('k1')).toBe(true);
      expect(await store.delete('k1')).toBe(false);
      expect(await store.get('k1')).toBeNull();
    });

    it('upserts by (agent, key) and re-embeds only when the content changed', async ({ skip }) => {
      if (!live()) return skip(skipReason);
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
      const [hit] = await store.search('second version', { topK: 1 });
      expect(hit?.memory.key).toBe('up');
      expect(hit!.score).toBeCloseTo(1, 5);
    });

    it('normalises tags: trimmed, case-folded, deduplicated', async ({ skip }) => {
      if (!live()) return skip(skipReason);
      const { memory } = await store.save({ key: 'tags', content: 'tag normalisation', tags: ['  Work ', 'WORK', 'Ünïcode', ''], agentId: 'tagger' });
      expect(memory.tags).toEqual(['work', 'ünïcode']);
      const hits = await store.search('tag normalisation', { agentId: 'tagger', tagsAll: [' WORK'] });
      expect(hits.map((h) => h.memory.key)).toEqual(['tags']);
    });

    it('keeps agents apart', async ({ skip }) => {
      if (!live()) return skip(skipReason);
      await store.save({ key: 'same', content: 'agent one secret', agentId: 'one' });
      await store.save({ key: 'same', content: 'agent two secret', agentId: 'two' });
      expect((await store.get('same', 'one'))?.content).toBe('agent one secret');
      expect((await store.get('same', 'two'))?.content).toBe('agent two secret');
      const hits = await store.search('secret', { agentId: 'one', topK: 10 });
      expect(hits.map((h) => h.memory.content)).toEqual(['agent one secret']);
    });

    it('filters by tagsAny, tagsAll and tagsNone inside the query', async ({ skip }) => {
      if (!live()) return skip(skipReason);
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

    it('orders hits by score and honours minScore', async ({ skip }) => {
      if (!live()) return skip(skipReason);
      const agentId = 'scores';
      await store.save({ agentId, key: 'exact', content: 'red fox jumps' });
      await store.save({ agentId, key: 'partial', content: 'red car parks' });
      await store.save({ agentId, key: 'none', content: 'blue whale sings' });
      const hits = await store.search('red fox jumps', { agentId, topK: 3 });
      expect(hits[0]?.memory.key).toBe('exact');
      for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
      const strict = await store.search('red fox jumps', { agentId, minScore: 0.99 });
      expect(strict.map((h) => h.memory.key)).toEqual(['exact']);
    });

    it('lists with cursor pagination, each memory exactly once', async ({ skip }) => {
      if (!live()) return skip(skipReason);
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

    it('counts tags and deletes by tag', async ({ skip }) => {
      if (!live()) return skip(skipReason);
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

    it('stores tags and keys that look like SQL or array syntax verbatim', async ({ skip }) => {
      if (!live()) return skip(skipReason);
      const agentId = 'quoting';
      const tags = ['a,b', '{x}', 'quote"d', "o'reilly", 'back\\slash', "'); DROP TABLE memories; --"];
      await store.save({ agentId, key: "k'; --", content: 'odd tags', tags });
      const hits = await store.search('odd tags', { agentId, tagsAll: tags });
      expect(hits).toHaveLength(1);
      expect(hits[0]!.memory.tags.sort()).toEqual(tags.map((t) => t.toLowerCase()).sort());
      expect(await store.get("k'; --", agentId)).not.toBeNull();
    });

    it('refuses to start with another embedder on a store that holds vectors', async ({ skip }) => {
      if (!live()) return skip(skipReason);
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
export function filteredSearchAtScale(name: string, open: () => Promise<Database | { skipReason: string }>) {
  describe(`filtered vector search on 20k memories (${name})`, () => {
    const N = 20_000;
    const DIMS = 32;
    const vectors = clusteredVectors(N, DIMS, 7);
    const rand = seededRandom(99);
    const queries = clusteredVectors(10, DIMS, 12345);
    const table = new Map(queries.map((q, i) => [`q${i}`, q]));
    const embedder = createTableEmbedder(DIMS, table);
    const tagsOf = (i: number) => [...(i % 10 === 3 ? ['common'] : []), ...(i % 500 === 17 ? ['rare'] : [])];
    let database: Database | undefined;
    let skipReason: string | undefined;

    beforeAll(async () => {
      const opened = await open();
      if ('skipReason' in opened) {
        skipReason = opened.skipReason;
        console.warn(`[${name}] skipped: ${skipReason}`);
        return;
      }
      database = opened;
      await ensureVectorSpace(database.db, embedder);
      for (let start = 0; start < N; start += 1000) {
        const rows = vectors.slice(start, start + 1000).map((embedding, j) => {
          const i = start + j;
          return { agentId: 'scale', key: `m${i}`, content: `memory ${i} ${rand()}`, tags: tagsOf(i), embedding };
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
      it(`returns topK rows for the 0.2% and the 10% tag: ${path}`, async ({ skip }) => {
        if (!database) return skip(skipReason);
        const store = createPgMemoryStore({ db: database.db, embedder, exactScanMaxRows });
        let rareRecall = 0;
        let commonRecall = 0;
        for (let q = 0; q < queries.length; q++) {
          const rare = await store.search(`q${q}`, { agentId: 'scale', tagsAny: ['rare'], topK: 10 });
          expect(rare).toHaveLength(10);
          expect(rare.every((h) => h.memory.tags.includes('rare'))).toBe(true);
          rareRecall += recall(rare.map((h) => h.memory.key), truth(queries[q]!, 'rare', 10));
          const common = await store.search(`q${q}`, { agentId: 'scale', tagsAll: ['common'], topK: 10 });
          expect(common).toHaveLength(10);
          expect(common.every((h) => h.memory.tags.includes('common'))).toBe(true);
          commonRecall += recall(common.map((h) => h.memory.key), truth(queries[q]!, 'common', 10));
        }
        expect(rareRecall / queries.length).toBeGreaterThanOrEqual(0.9);
        expect(commonRecall / queries.length).toBeGreaterThanOrEqual(0.9);
      });
    }

    it('returns every match when fewer than topK rows match', async ({ skip }) => {
      if (!database) return skip(skipReason);
      const store = createPgMemoryStore({ db: database.db, embedder, exactScanMaxRows: 0 });
      const hits = await store.search('q0', { agentId: 'scale', tagsAll: ['rare', 'common'], topK: 100 });
      const expected = Array.from({ length: N }, (_, i) => i).filter((i) => tagsOf(i).includes('rare') && tagsOf(i).includes('common'));
      expect(hits.map((h) => h.memory.key).sort()).toEqual(expected.map((i) => `m${i}`).sort());
    });
  });
}
