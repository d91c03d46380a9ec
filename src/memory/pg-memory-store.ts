import { type SQL, and, asc, desc, eq, getTableColumns, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { queryRows } from '../db/query-rows.js';
import { memories } from '../db/schema.js';
import type { Embedder } from '../embeddings/embedder.js';
import { type NormalizedFilter, filterToSql, normalizeFilter } from './memory-filter.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import {
  DEFAULT_AGENT_ID,
  type ListMemoriesOptions,
  type Memory,
  type MemoryFilter,
  type MemoryHit,
  type MemoryPage,
  type MemoryStore,
  type SaveMemoryInput,
  type SaveMemoryResult,
  type SearchMemoriesOptions,
  type TagCount,
} from './memory-types.js';
import { normalizeTags } from './tags.js';

export interface PgMemoryStoreOptions {
  db: Db;
  embedder: Embedder;
  /**
   * At most this many matching rows are ranked by an exact scan instead of the HNSW index.
   * An exact scan of a few thousand vectors is cheaper than walking the graph past the
   * non-matching rows, and it is the only way a rare tag still yields `topK` rows.
   */
  exactScanMaxRows?: number;
  /** HNSW candidate list size; raised to `topK` when that is larger. */
  efSearch?: number;
  /** The index path fetches `topK * candidateFactor` rows (at least `efSearch`) and keeps the best. */
  candidateFactor?: number;
  /** Rows an iterative index scan may visit before giving up (pgvector's `hnsw.max_scan_tuples`). */
  maxScanTuples?: number;
}

const { embedding: _embedding, id: _id, ...memoryColumns } = getTableColumns(memories);
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

const vectorParam = (v: number[]) => sql`${`[${v.join(',')}]`}::vector`;

export function createPgMemoryStore(options: PgMemoryStoreOptions): MemoryStore {
  const { db, embedder } = options;
  const exactScanMaxRows = options.exactScanMaxRows ?? 1000;
  const efSearch = options.efSearch ?? 40;
  const maxScanTuples = options.maxScanTuples ?? 20_000;
  const candidateFactor = options.candidateFactor ?? 4;

  async function embedOne(text: string): Promise<number[]> {
    const [vector] = await embedder.embed([text]);
    if (!vector) throw new Error(`embedder ${embedder.id} returned no vector`);
    return vector;
  }

  async function save(input: SaveMemoryInput): Promise<SaveMemoryResult> {
    const agentId = input.agentId ?? DEFAULT_AGENT_ID;
    const tags = normalizeTags(input.tags);
    const metadata = input.metadata ?? {};
    const current = await get(input.key, agentId);
    // Embed outside the transaction: on PGlite a transaction holds the only connection.
    let vector = current?.content === input.content ? null : await embedOne(input.content);

    return db.transaction(async (tx) => {
      const [locked] = await tx
        .select({ content: memories.content })
        .from(memories)
        .where(and(eq(memories.agentId, agentId), eq(memories.key, input.key)))
        .for('update');
      if (locked && locked.content === input.content) {
        const [row] = await tx
          .update(memories)
          .set({ tags, metadata, updatedAt: sql`now()` })
          .where(and(eq(memories.agentId, agentId), eq(memories.key, input.key)))
          .returning(memoryColumns);
        return { memory: toMemory(row!), created: false, reembedded: false };
      }
      // Another writer changed the content after we read it; our vector must match our content.
      vector ??= await embedOne(input.content);
      const [row] = await tx
        .insert(memories)
        .values({ agentId, key: input.key, content: input.content, tags, metadata, embedding: vector })
        .onConflictDoUpdate({
          target: [memories.agentId, memories.key],
          set: {
            content: sql`excluded.content`,
            tags: sql`excluded.tags`,
            metadata: sql`excluded.metadata`,
            embedding: sql`excluded.embedding`,
            updatedAt: sql`now()`,
          },
        })
        .returning({ ...memoryColumns, inserted: sql<boolean>`(xmax = 0)` });
      const { inserted, ...memory } = row!;
      return { memory: toMemory(memory), created: Boolean(inserted), reembedded: true };
    });
  }

  async function get(key: string, agentId = DEFAULT_AGENT_ID): Promise<Memory | null> {
    const [row] = await db
      .select(memoryColumns)
      .from(memories)
      .where(and(eq(memories.agentId, agentId), eq(memories.key, key)));
    return row ? toMemory(row) : null;
  }

  async function del(key: string, agentId = DEFAULT_AGENT_ID): Promise<boolean> {
    const rows = await db
      .delete(memories)
      .where(and(eq(memories.agentId, agentId), eq(memories.key, key)))
      .returning({ key: memories.key });
    return rows.length > 0;
  }

  async function search(query: string, opts: SearchMemoriesOptions = {}): Promise<MemoryHit[]> {
    return searchByVector(await embedOne(query), opts);
  }

  async function searchByVector(vector: number[], opts: SearchMemoriesOptions = {}): Promise<MemoryHit[]> {
    if (vector.length !== embedder.dimensions) {
      throw new RangeError(`query vector has ${vector.length} dimensions; the store holds ${embedder.dimensions}`);
    }
    const hits = await rank(vector, normalizeFilter(opts), opts.topK ?? 10);
    const minScore = opts.minScore;
    return minScore === undefined ? hits : hits.filter((h) => h.score >= minScore);
  }

  async function rank(vector: number[], filter: NormalizedFilter, topK: number): Promise<MemoryHit[]> {
    const where = and(filterToSql(filter), sql`${memories.embedding} IS NOT NULL`)!;
    const distance = sql`${memories.embedding} <=> ${vectorParam(vector)}`;
    const ranked = (tx: Db, limit: number) =>
      tx
        .select({ ...memoryColumns, distance: sql<number>`${distance}` })
        .from(memories)
        .where(where)
        .orderBy(distance)
        .limit(limit);

    return db.transaction(async (tx) => {
      const t = tx as unknown as Db;
      // Counted on the filter alone: the btree (agent) and GIN (tags) indexes answer it without
      // reading the wide vector rows.
      const matching = await countUpTo(t, filterToSql(filter), exactScanMaxRows + 1);
      let rows: Awaited<ReturnType<ReturnType<typeof ranked>['execute']>> = [];
      if (matching > exactScanMaxRows) {
        // Iterative scans keep walking the graph until enough rows pass the filter, so a
        // filter is applied before the LIMIT without starving the result. Over-fetching and
        // re-sorting by exact distance repairs most of what relaxed ordering and a small
        // candidate list miss.
        const candidates = Math.max(topK * candidateFactor, efSearch);
        // set_config(..., true) is SET LOCAL; one statement saves round trips.
        await t.execute(sql`SELECT set_config('hnsw.ef_search', ${String(Math.min(candidates, 1000))}, true),
          set_config('hnsw.iterative_scan', 'relaxed_order', true),
          set_config('hnsw.max_scan_tuples', ${String(maxScanTuples)}, true)`);
        rows = await ranked(t, candidates);
      }
      if (rows.length < Math.min(topK, matching)) {
        // Few matches, or the index gave up: rank every matching row exactly.
        await t.execute(sql`SELECT set_config('enable_indexscan', 'off', true)`);
        rows = await ranked(t, topK);
      }
      return rows
        .map(({ distance, ...row }) => ({ memory: toMemory(row), score: 1 - Number(distance) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, topK);
    });
  }

  async function list(opts: ListMemoriesOptions = {}): Promise<MemoryPage> {
    const limit = opts.limit ?? 50;
    const filter = normalizeFilter(opts);
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
    const filter = normalizeFilter(filterInput);
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
    const filter = normalizeFilter(filterInput);
    if (!filter.tagsAny.length && !filter.tagsAll.length) {
      throw new RangeError('deleteByTags needs tagsAny or tagsAll: a filter of excluded tags alone would delete almost everything');
    }
    const rows = await db.delete(memories).where(filterToSql(filter)).returning({ id: memories.id });
    return rows.length;
  }

  return { save, get, search, searchByVector, delete: del, list, tagCounts, deleteByTags };
}

async function countUpTo(db: Db, where: SQL, cap: number): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM ${memories} WHERE ${where} LIMIT ${cap}) AS m`,
  );
  return Number(row?.n ?? 0);
}
