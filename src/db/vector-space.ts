import { sql } from 'drizzle-orm';
import type { Embedder } from '../embeddings/embedder.js';
import type { Db } from './database.js';
import { queryRows } from './query-rows.js';
import { ident } from './sql-identifier.js';

/** A table holding embeddings of one text column, all in one vector space. */
export interface VectorTable {
  table: string;
  textColumn: string;
  /** The text that was embedded, as a SQL expression over the table's columns; default `textColumn`. */
  textExpression?: string;
  embeddingColumn: string;
  indexName: string;
  /** The HNSW index's build parameters; default pgvector's own. An index built before keeps its own. */
  hnsw?: HnswParams;
}

/** How an HNSW graph is built: links per node (`m`) and the candidate list of each insert (`ef_construction`). */
export interface HnswParams {
  m: number;
  efConstruction: number;
}

export const PGVECTOR_HNSW_DEFAULTS: HnswParams = Object.freeze({ m: 16, efConstruction: 64 });

/**
 * A sparser graph than pgvector's default for chunks, which a document adds several at a time:
 * inserting into the graph was the largest cost of an ingest besides the embedder, and on PGlite
 * it runs on the thread that serves requests. On all of SciFact's 27,220 chunks (512-d; `npm run
 * bench:hnsw`), an ingest cost 43.8 ms of CPU per document with m 16 and 25.4 ms with m 8; the
 * knowledge search widens its candidate list to make up for the sparser graph.
 */
export const CHUNK_HNSW: HnswParams = Object.freeze({ m: 8, efConstruction: 64 });

/**
 * The memories' graph, denser than pgvector's default build: memories go in one at a time, and a
 * graph built that way with ef_construction 64 found 96.7% of the exact 10 nearest of 100k
 * clustered 512-d vectors at ef_search 40 (`npm run bench:hnsw-recall`, see
 * docs/benchmarks/hnsw-recall.md).
 */
export const MEMORY_HNSW: HnswParams = Object.freeze({ m: 16, efConstruction: 128 });

/**
 * The turns' graph, sparse as the chunks': a chat writes a turn after every reply and an import
 * thousands, and on PGlite the graph insert was the largest part of writing a turn (3.6 ms of
 * 8–9 ms a LongMemEval turn, on the thread that serves requests). A search of more turns than are
 * ranked exactly widens its candidate list to make up for it (TURN_EF_SEARCH). Over 20,000
 * LongMemEval turns inserted five at a time on PostgreSQL: inserts 42.1 s with m 16, 20.3 s with
 * m 8; recall@10 of the 87 tuning questions against the exact top 10, m 16 at ef_search 80 0.989,
 * m 8 at 160 0.989 (at 250: 0.995 and 0.997).
 */
export const TURN_HNSW: HnswParams = Object.freeze({ m: 8, efConstruction: 64 });

export const VECTOR_TABLES: readonly VectorTable[] = [
  { table: 'memories', textColumn: 'content', embeddingColumn: 'embedding', indexName: 'memories_embedding_hnsw_idx', hnsw: MEMORY_HNSW },
  {
    table: 'chunks',
    textColumn: 'text',
    // As the ingest embeds it: the context (title) line, a blank line, the chunk.
    textExpression: `CASE WHEN "context" = '' THEN "text" ELSE "context" || E'\\n\\n' || "text" END`,
    embeddingColumn: 'embedding',
    indexName: 'chunks_embedding_hnsw_idx',
    hnsw: CHUNK_HNSW,
  },
  // Past turns (episodic recall): the date, the message before, the question and the answer, as embedded.
  { table: 'turns', textColumn: 'embedded_text', embeddingColumn: 'embedding', indexName: 'turns_embedding_hnsw_idx', hnsw: TURN_HNSW },
];

export class VectorSpaceMismatchError extends Error {
  constructor(
    readonly table: string,
    readonly stored: { embedderId: string; dimensions: number },
    readonly configured: { embedderId: string; dimensions: number },
  ) {
    super(
      `The "${table}" vectors were made by embedder "${stored.embedderId}" (${stored.dimensions} dimensions), ` +
        `but the configured embedder is "${configured.embedderId}" (${configured.dimensions} dimensions). ` +
        `Vector spaces are never mixed: start with the original embedder, or run \`npm run reembed\` to re-embed ` +
        `the store with the configured one.`,
    );
    this.name = 'VectorSpaceMismatchError';
  }
}

/**
 * Binds each vector table to the embedder's space: records it on first use, fixes the column's
 * dimension and builds the HNSW index. A store whose vectors came from another embedder is refused.
 */
export async function ensureVectorSpace(db: Db, embedder: Embedder, tables = VECTOR_TABLES): Promise<void> {
  const configured = { embedderId: embedder.id, dimensions: embedder.dimensions };
  await db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(727274102)`);
    for (const t of tables) {
      const stored = await readSpace(tx, t.table);
      if (stored && stored.embedderId === configured.embedderId && stored.dimensions === configured.dimensions) {
        await ensureIndex(tx, t, configured.dimensions);
        continue;
      }
      if (stored) {
        const rows = await queryRows(tx, sql`SELECT 1 FROM ${ident(t.table)} WHERE ${ident(t.embeddingColumn)} IS NOT NULL LIMIT 1`);
        if (rows.length > 0) throw new VectorSpaceMismatchError(t.table, stored, configured);
      }
      await setColumnDimensions(tx, t, configured.dimensions);
      await recordSpace(tx, t.table, configured);
    }
  });
}

/** The embedder the store's vectors came from, as first recorded; null for a store that records none yet. */
export async function storedEmbedderId(db: Db, tables = VECTOR_TABLES): Promise<string | null> {
  for (const t of tables) {
    const space = await readSpace(db, t.table);
    if (space) return space.embedderId;
  }
  return null;
}

export async function readSpace(db: Db, table: string): Promise<{ embedderId: string; dimensions: number } | null> {
  const [row] = await queryRows<{ embedder_id: string; dimensions: number }>(
    db,
    sql`SELECT embedder_id, dimensions FROM vector_spaces WHERE table_name = ${table}`,
  );
  return row ? { embedderId: row.embedder_id, dimensions: Number(row.dimensions) } : null;
}

export async function recordSpace(db: Db, table: string, space: { embedderId: string; dimensions: number }) {
  await db.execute(sql`
    INSERT INTO vector_spaces (table_name, embedder_id, dimensions, updated_at)
    VALUES (${table}, ${space.embedderId}, ${space.dimensions}, now())
    ON CONFLICT (table_name) DO UPDATE
      SET embedder_id = excluded.embedder_id, dimensions = excluded.dimensions, updated_at = now()`);
}

/** Drops the index and makes the column dimensionless, so vectors of another size can be written. */
export async function releaseColumnDimensions(db: Db, t: VectorTable): Promise<void> {
  await db.execute(sql`DROP INDEX IF EXISTS ${ident(t.indexName)}`);
  await db.execute(sql`ALTER TABLE ${ident(t.table)} ALTER COLUMN ${ident(t.embeddingColumn)} TYPE vector`);
}

export async function setColumnDimensions(db: Db, t: VectorTable, dimensions: number): Promise<void> {
  await releaseColumnDimensions(db, t);
  await db.execute(sql`ALTER TABLE ${ident(t.table)} ALTER COLUMN ${ident(t.embeddingColumn)} TYPE ${sql.raw(`vector(${Math.trunc(dimensions)})`)}`);
  await ensureIndex(db, t, dimensions);
}

async function ensureIndex(db: Db, t: VectorTable, dimensions: number): Promise<void> {
  // pgvector's HNSW index takes at most 2,000 dimensions; larger spaces fall back to exact scans.
  if (dimensions > 2000) return;
  const { m, efConstruction } = t.hnsw ?? PGVECTOR_HNSW_DEFAULTS;
  await db.execute(
    sql`CREATE INDEX IF NOT EXISTS ${ident(t.indexName)} ON ${ident(t.table)} USING hnsw (${ident(t.embeddingColumn)} vector_cosine_ops)
      WITH (m = ${sql.raw(String(Math.trunc(m)))}, ef_construction = ${sql.raw(String(Math.trunc(efConstruction)))})`,
  );
}
