import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { Database } from '../../../src/db/database.js';
import { queryRows } from '../../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../../src/db/vector-space.js';
import { type DocumentStore, createDocumentStore } from '../../../src/documents/document-store.js';
import { type DocumentSearch, createDocumentSearch } from '../../../src/documents/document-search.js';
import { createHashEmbedder } from '../../../testkit/hash-embedder.js';
import type { DatabaseDriver } from '../../support/database-drivers.js';

export const NO_TAGS = { tagsAny: [], tagsAll: [], tagsNone: [] };

export type DocumentStoreFixture = ReturnType<typeof useDocumentStoreFixture>;

/**
 * One empty, migrated database per contract run, emptied of documents before each case, its store
 * and search, and the statistics checks the cases share. Registers the suite's hooks, so call it
 * inside the suite's `describe`.
 */
export function useDocumentStoreFixture(driver: DatabaseDriver) {
  let database: Database | undefined;
  const embedder = createHashEmbedder(64);
  let store: DocumentStore;
  let search: DocumentSearch;

  beforeAll(async () => {
    database = await driver.open();
    await ensureVectorSpace(database.db, embedder);
    store = createDocumentStore({ db: database.db, embedder });
    search = createDocumentSearch({ db: database.db, embedder });
  });
  afterAll(async () => {
    await database?.close();
  });
  beforeEach(async () => {
    if (!database) return;
    for (const { id } of await queryRows<{ id: string }>(database.db, sql`SELECT id::text AS id FROM documents`)) await store.delete(id);
  });
  const db = () => database!.db;

  /** Statistics kept incrementally must equal the same statistics recomputed from scratch. */
  async function expectStatsConsistent() {
    const kept = await queryRows<{ term: string; df: number }>(db(), sql`SELECT term, df FROM term_stats ORDER BY term`);
    const recomputed = await queryRows<{ term: string; df: number }>(db(), sql`SELECT term, count(*)::int AS df FROM postings GROUP BY term ORDER BY term`);
    expect(kept.map((r) => [r.term, Number(r.df)])).toEqual(recomputed.map((r) => [r.term, Number(r.df)]));
    const [corpus] = await queryRows<{ total_chunks: string; total_length: string }>(
      db(),
      sql`SELECT total_chunks, total_length FROM corpus_stats WHERE tenant_id = 'default'`,
    );
    // total_chunks counts passages: the chunks that carry a length and postings.
    const [actual] = await queryRows<{ n: number; len: string | null }>(db(), sql`SELECT count(bm25_length)::int AS n, sum(bm25_length) AS len FROM chunks`);
    expect(Number(corpus?.total_chunks ?? 0)).toBe(Number(actual!.n));
    expect(Number(corpus?.total_length ?? 0)).toBe(Number(actual!.len ?? 0));
    const wrongLengths = await queryRows(
      db(),
      sql`SELECT c.id FROM chunks c LEFT JOIN (SELECT chunk_id, sum(tf) AS len FROM postings GROUP BY chunk_id) p ON p.chunk_id = c.id
          WHERE coalesce(p.len, 0) <> coalesce(c.bm25_length, 0) OR (c.bm25_length IS NULL) <> (c.passage_id <> c.id)`,
    );
    expect(wrongLengths).toEqual([]);
    // A passage is a run of its document's chunks, named by the first.
    const strayPassages = await queryRows(
      db(),
      sql`SELECT c.id FROM chunks c JOIN chunks l ON l.id = c.passage_id
          WHERE l.document_id <> c.document_id OR l.index > c.index OR l.passage_id <> l.id
            OR EXISTS (SELECT 1 FROM chunks m WHERE m.document_id = c.document_id AND m.index > l.index AND m.index < c.index AND m.passage_id <> l.id)`,
    );
    expect(strayPassages).toEqual([]);
    const orphans = await queryRows(db(), sql`SELECT c.id FROM chunks c LEFT JOIN chunks l ON l.id = c.passage_id WHERE l.id IS NULL`);
    expect(orphans).toEqual([]);
  }

  async function counts() {
    const [row] = await queryRows<{ d: number; c: number; p: number; t: number }>(
      db(),
      sql`SELECT (SELECT count(*)::int FROM documents) AS d, (SELECT count(*)::int FROM chunks) AS c,
                 (SELECT count(*)::int FROM postings) AS p, (SELECT count(*)::int FROM term_stats) AS t`,
    );
    return { documents: Number(row!.d), chunks: Number(row!.c), postings: Number(row!.p), terms: Number(row!.t) };
  }

  return { db, embedder, store: () => store, search: () => search, expectStatsConsistent, counts };
}
