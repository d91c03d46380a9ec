import { type SQL, and, asc, desc, eq, getTableColumns, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { memories } from '../db/schema.js';
import { uuidArray } from '../db/sql-arrays.js';
import { defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { createCorpusIndex } from '../retrieval/corpus-index.js';
import type { CorpusFilter } from '../retrieval/filter.js';
import { filterToSql } from '../retrieval/filter-sql.js';
import { fusionWeightsFor } from '../retrieval/fusion-weights.js';
import { afterCursor, createdAtText, keysetPage } from '../retrieval/keyset-page.js';
import type { RankedUnit } from '../retrieval/rank-units.js';
import { type TenantCorpusOptions, createRetrievalEngine } from '../retrieval/retrieval-engine.js';
import { normalizeTags } from '../retrieval/tags.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { MEMORY_CORPUS, memoryFilter } from './memory-corpus.js';
import {
  DEFAULT_AGENT_ID,
  type ListMemoriesOptions,
  type Memory,
  type MemoryFilter,
  type MemoryPage,
  type MemorySearchHit,
  type MemoryStore,
  type SaveMemoryInput,
  type SaveMemoryResult,
  type SearchMemoriesOptions,
  type TagCount,
  type VectorSearchOptions,
} from './memory-types.js';

/** The analyzer must be the one that indexed the stored memories (`indexUnindexedMemories` at start). */
export type PgMemoryStoreOptions = TenantCorpusOptions;

/**
 * Candidates each side of a hybrid search returns: five times topK, for the fusion to choose from,
 * at least 50 (cheap, and it lets a keyword-only match of a small topK in), at most 1000 unless
 * topK itself asks for more.
 */
export function hybridCandidates(topK: number): number {
  return Math.max(topK, Math.min(Math.max(topK * 5, 50), 1000));
}

const { embedding: _embedding, id: _id, bm25Length: _bm25Length, tenantId: _tenantId, ...memoryColumns } = getTableColumns(memories);
type MemoryRow = { [K in keyof typeof memoryColumns]: (typeof memories.$inferSelect)[K] };

const toMemory = (row: MemoryRow): Memory => ({
  key: row.key,
  content: row.content,
  tags: row.tags,
  metadata: row.metadata,
  agentId: row.agentId,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

export function createPgMemoryStore(options: PgMemoryStoreOptions): MemoryStore {
  const { db, embedder } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const analyzer = options.analyzer ?? defaultAnalyzer;
  const weights = Object.freeze({ ...(options.weights ?? fusionWeightsFor(embedder.id)) });
  const engine = createRetrievalEngine({ ...options, analyzer });
  // Taken first by every writer of the tenant's memories: see CorpusIndex.
  const index = createCorpusIndex(MEMORY_CORPUS, analyzer);
  const embedOne = (text: string) => engine.embedQuery(text);
  const where = (filter: CorpusFilter) => filterToSql(filter, MEMORY_CORPUS.filters);

  async function save(input: SaveMemoryInput): Promise<SaveMemoryResult> {
    const agentId = input.agentId ?? DEFAULT_AGENT_ID;
    const tags = normalizeTags(input.tags);
    const metadata = input.metadata ?? {};
    const { key, content } = input;
    const indexed = index.termsOf(content);
    const byKey = and(eq(memories.tenantId, tenantId), eq(memories.agentId, agentId), eq(memories.key, key))!;

    // One attempt; null when the content changed after it was read and no vector for ours is at hand.
    const attempt = (vector: number[] | null, mayRetry: boolean): Promise<SaveMemoryResult | null> =>
      db.transaction(async (txn) => {
        const tx = txn as unknown as Db;
        await index.lock(tx, tenantId, true);
        const [locked] = await tx
          .select({ id: memories.id, content: memories.content, bm25Length: memories.bm25Length })
          .from(memories)
          .where(byKey)
          .for('update');
        if (locked && locked.content === content) {
          const [row] = await tx
            .update(memories)
            .set({ tags, metadata, updatedAt: sql`now()`, ...(locked.bm25Length === null ? { bm25Length: indexed.length } : {}) })
            .where(byKey)
            .returning(memoryColumns);
          // Saved before the BM25 index existed: indexed now, since the lock is held anyway.
          if (locked.bm25Length === null) await index.add(tx, tenantId, [{ id: locked.id, ...indexed }]);
          return { memory: toMemory(row!), created: false, reembedded: false };
        }
        // Another writer changed the content after we read it; our vector must match our content.
        if (!vector && mayRetry) return null;
        const embedding = vector ?? (await embedOne(content));
        if (locked) {
          // Its content is replaced: its postings go, and its length leaves the totals.
          await index.removePostings(tx, tenantId, sql`SELECT ${memories.id} FROM ${memories} WHERE ${byKey}`);
          if (locked.bm25Length !== null) await index.adjustTotals(tx, tenantId, -1, -locked.bm25Length);
        }
        // The corpus lock keeps other writers out, so the conflict arm is only the update of `locked`.
        const [row] = await tx
          .insert(memories)
          .values({ tenantId, agentId, key, content, tags, metadata, embedding, bm25Length: indexed.length })
          .onConflictDoUpdate({
            target: [memories.tenantId, memories.agentId, memories.key],
            set: {
              content: sql`excluded.content`,
              tags: sql`excluded.tags`,
              metadata: sql`excluded.metadata`,
              embedding: sql`excluded.embedding`,
              bm25Length: sql`excluded.bm25_length`,
              updatedAt: sql`now()`,
            },
          })
          .returning({ ...memoryColumns, id: memories.id, inserted: sql<boolean>`(xmax = 0)` });
        const { inserted, id, ...memory } = row!;
        await index.add(tx, tenantId, [{ id, ...indexed }]);
        return { memory: toMemory(memory), created: Boolean(inserted), reembedded: true };
      });

    for (let tries = 1; ; tries++) {
      const current = await get(key, agentId);
      // Embed outside the transaction: on PGlite a transaction holds the only connection, and
      // inside it the corpus lock would stall every memory writer for the embedder's time.
      const vector = current?.content === content ? null : await embedOne(content);
      const saved = await attempt(vector, tries < 3);
      if (saved) return saved;
    }
  }

  /** Deletes the memories matching `where` with their postings, in the caller's transaction. */
  async function remove(tx: Db, where: SQL): Promise<number> {
    await index.lock(tx, tenantId, false);
    return index.deleteRows(tx, tenantId, where);
  }

  async function get(key: string, agentId = DEFAULT_AGENT_ID): Promise<Memory | null> {
    const [row] = await db
      .select(memoryColumns)
      .from(memories)
      .where(and(eq(memories.tenantId, tenantId), eq(memories.agentId, agentId), eq(memories.key, key)));
    return row ? toMemory(row) : null;
  }

  async function del(key: string, agentId = DEFAULT_AGENT_ID): Promise<boolean> {
    const where = and(eq(memories.tenantId, tenantId), eq(memories.agentId, agentId), eq(memories.key, key))!;
    return db.transaction(async (tx) => (await remove(tx as unknown as Db, where)) > 0);
  }

  async function search(query: string, opts: SearchMemoriesOptions = {}): Promise<MemorySearchHit[]> {
    const mode = opts.mode ?? 'hybrid';
    const topK = opts.topK ?? 10;
    const filter = memoryFilter(tenantId, opts);
    const ranked = await engine.search(MEMORY_CORPUS, query, {
      mode,
      filter,
      topK,
      // Vector and text modes rank their own topK; hybrid fuses wider lists.
      candidateK: mode === 'hybrid' ? hybridCandidates(topK) : topK,
      weights: opts.weights ?? weights,
      minScore: opts.minScore,
      payload: memoryColumns,
    });
    return hydrate(ranked.slice(0, topK), filter);
  }

  async function searchByVector(vector: number[], opts: VectorSearchOptions = {}): Promise<MemorySearchHit[]> {
    const topK = opts.topK ?? 10;
    const filter = memoryFilter(tenantId, opts);
    const ranked = await engine.search(MEMORY_CORPUS, '', { mode: 'vector', vector, filter, topK, candidateK: topK, weights, minScore: opts.minScore, payload: memoryColumns });
    return hydrate(ranked, filter);
  }

  /**
   * The ranked memories, in rank order: those the vector side brought along as they were, the
   * others (found by BM25 only) read again if they still match the filter, since one may have
   * changed or gone since.
   */
  async function hydrate(ranked: readonly RankedUnit[], filter: CorpusFilter): Promise<MemorySearchHit[]> {
    const missing = ranked.filter((h) => !h.row).map((h) => h.id);
    const rows =
      missing.length === 0
        ? []
        : await db
            .select({ ...memoryColumns, id: memories.id })
            .from(memories)
            .where(and(where(filter), sql`${memories.id} = ANY(${uuidArray(missing)})`));
    const fetched = new Map(rows.map(({ id, ...row }) => [id, row]));
    return ranked.flatMap((h) => {
      const row = (h.row as MemoryRow | undefined) ?? fetched.get(h.id);
      return row ? [{ memory: toMemory(row), score: h.score, ranks: h.ranks }] : [];
    });
  }

  async function list(opts: ListMemoriesOptions = {}): Promise<MemoryPage> {
    const limit = opts.limit ?? 50;
    const rows = await db
      .select({ ...memoryColumns, id: memories.id, createdAtText: createdAtText(memories) })
      .from(memories)
      .where(and(where(memoryFilter(tenantId, opts)), afterCursor(opts.cursor, memories)))
      .orderBy(desc(memories.createdAt), desc(memories.id))
      .limit(limit + 1);
    return keysetPage(rows, limit, ({ id: _i, createdAtText: _c, ...row }) => toMemory(row));
  }

  async function tagCounts(filterInput: MemoryFilter = {}): Promise<TagCount[]> {
    const filter = memoryFilter(tenantId, filterInput);
    const tag = sql<string>`t.tag`;
    const rows = await db
      .select({ tag, count: sql<number>`count(*)::int` })
      .from(sql`${memories}, unnest(${memories.tags}) AS t(tag)`)
      .where(where(filter))
      .groupBy(tag)
      .orderBy(desc(sql`count(*)`), asc(tag));
    return rows.map((r) => ({ tag: r.tag, count: Number(r.count) }));
  }

  async function deleteByTags(filterInput: MemoryFilter): Promise<number> {
    const filter = memoryFilter(tenantId, filterInput);
    if (!filter.tags.tagsAny.length && !filter.tags.tagsAll.length) {
      throw new RangeError('deleteByTags needs tagsAny or tagsAll: a filter of excluded tags alone would delete almost everything');
    }
    return db.transaction(async (tx) => remove(tx as unknown as Db, where(filter)));
  }

  return { save, get, search, searchByVector, delete: del, list, tagCounts, deleteByTags };
}
