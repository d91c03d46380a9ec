import { type SQL, and, asc, desc, eq, getTableColumns, lt, or, sql } from 'drizzle-orm';
import {
  MEMORY_BM25,
  addBm25Documents,
  adjustBm25Totals,
  bm25Candidates,
  lockBm25Corpus,
  queryTermCounts,
  readBm25Corpus,
  removeBm25Postings,
  setBm25Analyzer,
} from '../db/bm25-index.js';
import type { Db } from '../db/database.js';
import { type VectorScanOptions, filteredVectorSearch } from '../db/filtered-vector-search.js';
import { memories } from '../db/schema.js';
import { uuidArray, vectorParam } from '../db/sql-arrays.js';
import type { Embedder } from '../embeddings/embedder.js';
import { type Analyzer, defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { type Bm25Params, DEFAULT_BM25_PARAMS } from '../retrieval/bm25/bm25.js';
import { AnalyzerMismatchError } from '../documents/document-store.js';
import { fuse } from '../retrieval/fusion.js';
import { type FusionWeights, fusionWeightsFor } from '../documents/knowledge-search.js';
import { type NormalizedFilter, filterToSql, normalizeFilter } from './memory-filter.js';
import { decodeCursor, encodeCursor } from '../retrieval/cursor.js';
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
import { normalizeTags } from '../retrieval/tags.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';

export interface PgMemoryStoreOptions extends VectorScanOptions {
  db: Db;
  embedder: Embedder;
  /** The tenant whose memories this store reads and writes, and only those. Default `default`. */
  tenantId?: string;
  /** Must be the analyzer that indexed the stored memories (`indexUnindexedMemories` at start). */
  analyzer?: Analyzer;
  bm25?: Bm25Params;
  /** Hybrid search's fusion weights; default `fusionWeightsFor(embedder.id)`. */
  weights?: FusionWeights;
}

/** What to do when the BM25 index of memories was built by another analyzer. */
export const MEMORY_REINDEX_REMEDY = 'Restart the server: it re-indexes the memories at start (indexUnindexedMemories).';

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

const withMinScore = <H extends { score: number }>(hits: H[], minScore: number | undefined): H[] =>
  minScore === undefined ? hits : hits.filter((h) => h.score >= minScore);

const toMemory = (row: MemoryRow): Memory => ({
  key: row.key,
  content: row.content,
  tags: row.tags,
  metadata: row.metadata,
  agentId: row.agentId,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

type Indexed = { termFrequencies: Map<string, number>; length: number };

export function createPgMemoryStore(options: PgMemoryStoreOptions): MemoryStore {
  const { db, embedder } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const scanOptions: VectorScanOptions = options;
  const analyzer = options.analyzer ?? defaultAnalyzer;
  const bm25 = options.bm25 ?? DEFAULT_BM25_PARAMS;
  const weights = Object.freeze({ ...(options.weights ?? fusionWeightsFor(embedder.id)) });

  const indexTerms = (content: string): Indexed => {
    const termFrequencies = analyzer.termFrequencies(content);
    let length = 0;
    for (const tf of termFrequencies.values()) length += tf;
    return { termFrequencies, length };
  };

  /**
   * Taken first by every writer of the tenant's memories: it serialises them, so postings, document
   * frequencies and totals move together and the term upserts never deadlock.
   */
  async function lockIndex(tx: Db, writingPostings: boolean): Promise<void> {
    const corpus = await lockBm25Corpus(tx, MEMORY_BM25, tenantId, analyzer.id);
    if (!writingPostings || corpus.analyzerId === analyzer.id) return;
    if (corpus.total > 0) throw new AnalyzerMismatchError(corpus.analyzerId, analyzer.id, MEMORY_REINDEX_REMEDY);
    await setBm25Analyzer(tx, MEMORY_BM25, tenantId, analyzer.id);
  }

  /**
   * Takes the postings of the memories matching `where` out of the index (their content is
   * replaced, or they are deleted); the totals are the caller's, which knows their lengths.
   */
  async function unindex(tx: Db, where: SQL): Promise<void> {
    await removeBm25Postings(tx, MEMORY_BM25, tenantId, sql`SELECT ${memories.id} FROM ${memories} WHERE ${where}`);
  }

  async function embedOne(text: string): Promise<number[]> {
    const [vector] = await embedder.embed([text]);
    if (!vector) throw new Error(`embedder ${embedder.id} returned no vector`);
    return vector;
  }

  async function save(input: SaveMemoryInput): Promise<SaveMemoryResult> {
    const agentId = input.agentId ?? DEFAULT_AGENT_ID;
    const tags = normalizeTags(input.tags);
    const metadata = input.metadata ?? {};
    const { key, content } = input;
    const indexed = indexTerms(content);
    const byKey = and(eq(memories.tenantId, tenantId), eq(memories.agentId, agentId), eq(memories.key, key))!;

    // One attempt; null when the content changed after it was read and no vector for ours is at hand.
    const attempt = (vector: number[] | null, mayRetry: boolean): Promise<SaveMemoryResult | null> =>
      db.transaction(async (txn) => {
        const tx = txn as unknown as Db;
        await lockIndex(tx, true);
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
          if (locked.bm25Length === null) await addBm25Documents(tx, MEMORY_BM25, tenantId, [{ id: locked.id, ...indexed }]);
          return { memory: toMemory(row!), created: false, reembedded: false };
        }
        // Another writer changed the content after we read it; our vector must match our content.
        if (!vector && mayRetry) return null;
        const embedding = vector ?? (await embedOne(content));
        if (locked) {
          await unindex(tx, byKey);
          if (locked.bm25Length !== null) await adjustBm25Totals(tx, MEMORY_BM25, tenantId, -1, -locked.bm25Length);
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
        await addBm25Documents(tx, MEMORY_BM25, tenantId, [{ id, ...indexed }]);
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
    await lockIndex(tx, false);
    await unindex(tx, where);
    const rows = await tx.delete(memories).where(where).returning({ length: memories.bm25Length });
    let count = 0;
    let length = 0;
    for (const row of rows) {
      if (row.length === null) continue;
      count += 1;
      length += row.length;
    }
    await adjustBm25Totals(tx, MEMORY_BM25, tenantId, -count, -length);
    return rows.length;
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
    if (mode === 'vector') return searchByVector(await embedOne(query), opts);
    const topK = opts.topK ?? 10;
    const filter = normalizeFilter(tenantId, opts);
    if (mode === 'text') {
      const textHits = await textCandidates(query, filter, topK);
      const rows = await memoriesById(textHits.map((h) => h.id), filter);
      return textHits.flatMap((h, i) => {
        const memory = rows.get(h.id);
        return memory ? [{ memory, score: h.score, ranks: { vector: null, text: i + 1 } }] : [];
      });
    }

    const candidates = hybridCandidates(topK);
    // One after the other: on PGlite the vector search's transaction holds the only connection.
    const vectorHits = withMinScore(await rank(await embedOne(query), filter, candidates), opts.minScore);
    const textHits = await textCandidates(query, filter, candidates);
    const w = opts.weights ?? weights;
    const fused = fuse(
      [
        { ids: vectorHits.map((h) => h.id), weight: w.vector },
        { ids: textHits.map((h) => h.id), weight: w.text },
      ],
      w.k ?? 60,
    ).slice(0, topK);
    const known = new Map(vectorHits.map((h) => [h.id, h.memory]));
    const fetched = await memoriesById(
      fused.filter((h) => !known.has(h.id)).map((h) => h.id),
      filter,
    );
    return fused.flatMap((h) => {
      const memory = known.get(h.id) ?? fetched.get(h.id);
      // A memory deleted between the candidate queries and this one is left out.
      if (!memory) return [];
      return [{ memory, score: h.score, ranks: { vector: h.ranks[0] ?? null, text: h.ranks[1] ?? null } }];
    });
  }

  async function searchByVector(vector: number[], opts: VectorSearchOptions = {}): Promise<MemorySearchHit[]> {
    if (vector.length !== embedder.dimensions) {
      throw new RangeError(`query vector has ${vector.length} dimensions; the store holds ${embedder.dimensions}`);
    }
    const hits = withMinScore(await rank(vector, normalizeFilter(tenantId, opts), opts.topK ?? 10), opts.minScore);
    return hits.map(({ memory, score }, i) => ({ memory, score, ranks: { vector: i + 1, text: null } }));
  }

  /** Memories by BM25 over their content, computed in the database; OR over the query's terms. */
  async function textCandidates(query: string, filter: NormalizedFilter, limit: number): Promise<{ id: string; score: number }[]> {
    const terms = queryTermCounts(analyzer.analyze(query));
    if (terms.size === 0 || limit <= 0) return [];
    const corpus = await readBm25Corpus(db, MEMORY_BM25, tenantId);
    if (!corpus || corpus.total === 0) return [];
    if (corpus.analyzerId !== analyzer.id) throw new AnalyzerMismatchError(corpus.analyzerId, analyzer.id, MEMORY_REINDEX_REMEDY);
    return bm25Candidates(db, MEMORY_BM25, tenantId, {
      terms,
      table: memories,
      idColumn: memories.id,
      lengthColumn: memories.bm25Length,
      where: filterToSql(filter),
      limit,
      params: bm25,
    });
  }

  /** The memories with these ids that still match the filter (they may have changed since). */
  async function memoriesById(ids: string[], filter: NormalizedFilter): Promise<Map<string, Memory>> {
    if (ids.length === 0) return new Map();
    const rows = await db
      .select({ ...memoryColumns, id: memories.id })
      .from(memories)
      .where(and(filterToSql(filter), sql`${memories.id} = ANY(${uuidArray(ids)})`));
    return new Map(rows.map(({ id, ...row }) => [id, toMemory(row)]));
  }

  async function rank(vector: number[], filter: NormalizedFilter, topK: number): Promise<{ id: string; memory: Memory; score: number }[]> {
    const distance = sql`${memories.embedding} <=> ${vectorParam(vector)}`;
    const rows = await filteredVectorSearch(
      db,
      {
        table: memories,
        where: filterToSql(filter),
        limit: topK,
        ranked: (tx, limit) =>
          tx
            .select({ ...memoryColumns, id: memories.id, distance: sql<number>`${distance}` })
            .from(memories)
            .where(and(filterToSql(filter), sql`${memories.embedding} IS NOT NULL`))
            .orderBy(distance)
            .limit(limit),
      },
      scanOptions,
    );
    return rows
      .map(({ distance, id, ...row }) => ({ id, memory: toMemory(row), score: 1 - Number(distance) }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .slice(0, topK);
  }

  async function list(opts: ListMemoriesOptions = {}): Promise<MemoryPage> {
    const limit = opts.limit ?? 50;
    const filter = normalizeFilter(tenantId, opts);
    const conditions: SQL[] = [filterToSql(filter)];
    if (opts.cursor) {
      const { createdAt, id } = decodeCursor(opts.cursor);
      const at = sql`${createdAt}::timestamptz`;
      conditions.push(or(lt(memories.createdAt, at), and(eq(memories.createdAt, at), lt(memories.id, id)))!);
    }
    const rows = await db
      .select({ ...memoryColumns, id: memories.id, createdAtText: sql<string>`${memories.createdAt}::text` })
      .from(memories)
      .where(and(...conditions))
      .orderBy(desc(memories.createdAt), desc(memories.id))
      .limit(limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      items: page.map(({ id: _i, createdAtText: _c, ...row }) => toMemory(row)),
      nextCursor: rows.length > limit && last ? encodeCursor({ createdAt: last.createdAtText, id: last.id }) : null,
    };
  }

  async function tagCounts(filterInput: MemoryFilter = {}): Promise<TagCount[]> {
    const filter = normalizeFilter(tenantId, filterInput);
    const tag = sql<string>`t.tag`;
    const rows = await db
      .select({ tag, count: sql<number>`count(*)::int` })
      .from(sql`${memories}, unnest(${memories.tags}) AS t(tag)`)
      .where(filterToSql(filter))
      .groupBy(tag)
      .orderBy(desc(sql`count(*)`), asc(tag));
    return rows.map((r) => ({ tag: r.tag, count: Number(r.count) }));
  }

  async function deleteByTags(filterInput: MemoryFilter): Promise<number> {
    const filter = normalizeFilter(tenantId, filterInput);
    if (!filter.tagsAny.length && !filter.tagsAll.length) {
      throw new RangeError('deleteByTags needs tagsAny or tagsAll: a filter of excluded tags alone would delete almost everything');
    }
    return db.transaction(async (tx) => remove(tx as unknown as Db, filterToSql(filter)));
  }

  return { save, get, search, searchByVector, delete: del, list, tagCounts, deleteByTags };
}
