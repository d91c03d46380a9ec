import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Database } from '../../../src/db/database.js';
import { queryRows } from '../../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../../src/db/vector-space.js';
import { defaultAnalyzer } from '../../../src/retrieval/bm25/analyzer.js';
import { InMemoryBm25Index } from '../../../src/retrieval/bm25/bm25.js';
import type { MemoryStore } from '../../../src/memory/memory-types.js';
import { createPgMemoryStore } from '../../../src/memory/pg-memory-store.js';
import { createHashEmbedder } from '../../../testkit/hash-embedder.js';
import type { DatabaseDriver } from '../../support/database-drivers.js';

export type MemoryStoreFixture = ReturnType<typeof useMemoryStoreFixture>;

/**
 * One empty, migrated database per contract run, its store, and the BM25 index checks the cases
 * share. Registers the suite's hooks, so call it inside the suite's `describe`.
 */
export function useMemoryStoreFixture(driver: DatabaseDriver) {
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

  return { db, store: () => store, embedder, expectIndexExact, expectBm25LikeReference };
}
