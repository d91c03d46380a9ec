import { type SQL, and, asc, desc, eq, getTableColumns, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { type VectorScanOptions, filteredVectorSearch } from '../db/filtered-vector-search.js';
import { memories } from '../db/schema.js';
import { vectorParam } from '../db/sql-arrays.js';
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

export interface PgMemoryStoreOptions extends VectorScanOptions {
  db: Db;
  embedder: Embedder;
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


export function createPgMemoryStore(options: PgMemoryStoreOptions): MemoryStore {
  const { db, embedder } = options;
  const scanOptions: VectorScanOptions = options;

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
    const distance = sql`${memories.embedding} <=> ${vectorParam(vector)}`;
    const rows = await filteredVectorSearch(
      db,
      {
        table: memories,
        where: filterToSql(filter),
        limit: topK,
        ranked: (tx, limit) =>
          tx
            .select({ ...memoryColumns, distance: sql<number>`${distance}` })
            .from(memories)
            .where(and(filterToSql(filter), sql`${memories.embedding} IS NOT NULL`))
            .orderBy(distance)
            .limit(limit),
      },
      scanOptions,
    );
    return rows
      .map(({ distance, ...row }) => ({ memory: toMemory(row), score: 1 - Number(distance) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, topK);
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
