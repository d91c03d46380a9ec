import { sql } from 'drizzle-orm';
import pg from 'pg';
import { expect, it } from 'vitest';
import { queryRows } from '../../../src/db/query-rows.js';
import { memories } from '../../../src/db/schema/index.js';
import { VectorSpaceMismatchError, ensureVectorSpace } from '../../../src/db/vector-space.js';
import { createAnalyzer } from '../../../src/retrieval/bm25/analyzer.js';
import { AnalyzerMismatchError } from '../../../src/retrieval/analyzer-mismatch-error.js';
import { indexUnindexedMemories } from '../../../src/memory/memory-text-index.js';
import { createPgMemoryStore } from '../../../src/memory/pg-memory-store.js';
import { createHashEmbedder } from '../../../testkit/hash-embedder.js';
import type { MemoryStoreFixture } from './memory-store-fixture.js';

/** Embedding and indexing around the writes: racing content, late indexes, analyzer and embedder changes. Registered inside the MemoryStore contract's `describe`. */
export function memoryStoreIndexingCases(f: MemoryStoreFixture) {
  const { db, store, embedder, expectIndexExact } = f;
  it('re-embeds outside the transaction when the content changed between its read and the save', async () => {
    const agentId = 'raced';
    await store().save({ agentId, key: 'k', content: 'original words here' });
    // Another writer's update lands after the save read the row, before its transaction starts
    // (written as the store would: the index follows the content): as the writer's lane checks out
    // its connection from the server's pool, or as PGlite's transaction begins.
    let raced = false;
    const race = async () => {
      if (raced) return;
      raced = true;
      await store().save({ agentId, key: 'k', content: 'changed meanwhile' });
    };
    const beforeCalling =
      (owner: object, fn: (...a: unknown[]) => unknown) =>
      async (...args: unknown[]) => {
        await race();
        return fn.apply(owner, args);
      };
    const racingDb = new Proxy(db(), {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (prop === 'transaction') return beforeCalling(target, value as (...a: unknown[]) => unknown);
        if (prop === '$client' && value instanceof pg.Pool) {
          return new Proxy(value, {
            get(pool, name) {
              const member = Reflect.get(pool, name, pool) as unknown;
              if (name === 'connect') return beforeCalling(pool, member as (...a: unknown[]) => unknown);
              return typeof member === 'function' ? member.bind(pool) : member;
            },
          });
        }
        return value;
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
    expect((await store().search('original', { agentId, mode: 'text' })).map((h) => h.memory.key)).toEqual(['k']);
    expect(await store().search('meanwhile', { agentId, mode: 'text' })).toEqual([]);
  });

  it('indexes memories saved before the BM25 index existed, and rebuilds after an analyzer change', async () => {
    const agentId = 'legacy';
    // Rows as the migration leaves them: bm25_length NULL, no postings.
    const contents = ['Legacy memory about Ingrid Halvorsen', 'Parking spot 7G-118 at the depot', 'Old note on glacier tours', 'Unrelated'];
    const vectors = await embedder.embed(contents);
    await db()
      .insert(memories)
      .values(contents.map((content, i) => ({ agentId, key: `old${i}`, content, embedding: vectors[i]! })));
    expect(await store().search('Halvorsen', { agentId, mode: 'text' })).toEqual([]);
    const [before] = await queryRows<{ total: string }>(db(), sql`SELECT total FROM memory_corpus_stats`);

    const progress: number[] = [];
    const result = await indexUnindexedMemories(db(), { batchSize: 3, onProgress: (n) => progress.push(n) });
    expect(result).toEqual({ indexed: 4, rebuilt: false });
    expect(progress).toEqual([3, 4]);
    await expectIndexExact();
    const [after] = await queryRows<{ total: string }>(db(), sql`SELECT total FROM memory_corpus_stats`);
    expect(Number(after!.total)).toBe(Number(before?.total ?? 0) + 4);
    expect((await store().search('Halvorsen', { agentId, mode: 'text' })).map((h) => h.memory.key)).toEqual(['old0']);
    expect((await store().search('7G-118 parking', { agentId })).map((h) => h.memory.key)[0]).toBe('old1');
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
    await store().save({ agentId, key: 'late', content: 'Late legacy row about Ottoline' });
    await expectIndexExact();
    expect((await store().search('Ottoline', { agentId, mode: 'text' })).map((h) => h.memory.key)).toEqual(['late']);

    // Postings of another analyzer are dropped and every memory re-indexed; this store then refuses to write.
    const [{ n }] = (await queryRows<{ n: number }>(db(), sql`SELECT count(*)::int AS n FROM memories`)) as [{ n: number }];
    const unstemmed = createAnalyzer({ stem: false });
    expect(await indexUnindexedMemories(db(), { analyzer: unstemmed })).toEqual({ indexed: Number(n), rebuilt: true });
    await expect(store().save({ agentId, key: 'refused', content: 'written by the wrong analyzer' })).rejects.toBeInstanceOf(AnalyzerMismatchError);
    await expect(store().search('Halvorsen', { agentId, mode: 'text' })).rejects.toBeInstanceOf(AnalyzerMismatchError);
    const unstemmedStore = createPgMemoryStore({ db: db(), embedder, analyzer: unstemmed });
    expect((await unstemmedStore.search('tours', { agentId, mode: 'text' })).map((h) => h.memory.key)).toEqual(['old2']);
    expect(await unstemmedStore.search('tour', { agentId, mode: 'text' })).toEqual([]);
    expect(await indexUnindexedMemories(db())).toEqual({ indexed: Number(n), rebuilt: true });
    await expectIndexExact();
  });

  it('refuses to start with another embedder on a store that holds vectors', async () => {
    await store().save({ key: 'vs', content: 'vector space guard' });
    const other = createHashEmbedder(32, 'test:other-32');
    const err = await ensureVectorSpace(db(), other).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VectorSpaceMismatchError);
    expect(String((err as Error).message)).toContain('test:hash-64');
    expect(String((err as Error).message)).toContain('test:other-32');
    // The same embedder is accepted again.
    await ensureVectorSpace(db(), embedder);
  });
}
