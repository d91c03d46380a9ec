import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import type { Database } from '../../../../src/db/database.js';
import { queryRows } from '../../../../src/db/query-rows.js';
import { chunks, documents, memories } from '../../../../src/db/schema/index.js';
import type { Embedder } from '../../../../src/embeddings/embedder.js';
import { indexUnindexedMemories } from '../../../../src/memory/memory-text-index.js';
import { type ClusteredSet, TAG_CASES } from '../clustered-set.js';
import { N, DIMS, serverUrl, reuse, MASTRA_INDEX, layout, withPgVector, log } from './peers-config.js';

// Databases and rows: a fresh database per run, the bench's embedder, and memrag's tables filled as production fills them.
export async function openFresh(name: string): Promise<{ url: string; filled: boolean }> {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  if (reuse) {
    const probe = new pg.Client({ connectionString: url.toString() });
    const n = await probe
      .connect()
      .then(() =>
        probe.query(
          `SELECT (SELECT count(*) FROM memories)::int AS m, (SELECT count(*) FROM chunks)::int AS c,
            ${withPgVector ? `(SELECT count(*) FROM ${MASTRA_INDEX})::int` : `${N}`} AS v,
            (SELECT coalesce('toast_tuple_target=8160' = ANY (reloptions), false) FROM pg_class WHERE oid = 'memories'::regclass) AS inrow,
            (SELECT array_agg(DISTINCT t ORDER BY t) FROM memories, unnest(tags) AS t) AS tags`,
        ),
      )
      .then((r) => r.rows[0] as { m: number; c: number; v: number; inrow: boolean; tags: string[] | null })
      .catch(() => null);
    await probe.end().catch(() => {});
    const sameLayout = !layout || n?.inrow === (layout === 'inrow');
    // Rows filled before a tag case was added lack its tag: filled again.
    const caseTags = TAG_CASES.flatMap((c) => (c.tag ? [c.tag] : [])).sort();
    const sameTags = n?.tags?.join() === caseTags.join();
    if (n && n.m === N && n.c === N && n.v === N && sameLayout && sameTags) return { url: url.toString(), filled: true };
  }
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return { url: url.toString(), filled: false };
}

export function benchEmbedder(set: ClusteredSet): Embedder {
  const byText = new Map(Array.from({ length: set.queries }, (_, q) => [set.queryText(q), set.query(q)]));
  return {
    id: `bench:clustered-${DIMS}`,
    dimensions: DIMS,
    maxInputTokens: 512,
    embed: async (texts) => texts.map((t) => byText.get(t) ?? set.query(0)),
    close: async () => {},
  };
}

const VECTOR_INDEXES = ['memories_embedding_hnsw_idx', 'chunks_embedding_hnsw_idx'];

/** `fill` run without the memories' and chunks' HNSW indexes, which are built again after it. */
export async function withIndexesBuiltAfter<T>(url: string, fill: () => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE indexname = ANY ($1)`, [VECTOR_INDEXES]);
    for (const name of VECTOR_INDEXES) await admin.query(`DROP INDEX IF EXISTS ${name}`);
    const filled = await fill();
    // The whole graph in memory: past maintenance_work_mem the build inserts row by row again.
    await admin.query(`SET maintenance_work_mem = '2GB'`);
    for (const r of rows) {
      log(`building ${r.indexdef}`);
      await admin.query(r.indexdef);
    }
    return filled;
  } finally {
    await admin.end();
  }
}

/** The memories' layout BENCH_LAYOUT names, set on the empty table (rows keep the layout they were written with). */
export async function setLayout(database: Database): Promise<void> {
  if (layout === 'toast') await database.db.execute(sql`ALTER TABLE memories RESET (toast_tuple_target)`);
  if (layout === 'inrow') await database.db.execute(sql`ALTER TABLE memories SET (toast_tuple_target = 8160)`);
}

/** Rows in as memrag's production path leaves them: the index exists, each row goes into the graph. */
export async function fillMemrag(database: Database, set: ClusteredSet, rows: number): Promise<{ memories: number; chunks: number }> {
  const batch = 500;
  let t0 = performance.now();
  for (let start = 0; start < rows; start += batch) {
    const values = [];
    for (let i = start; i < Math.min(rows, start + batch); i++) {
      values.push({ agentId: 'bench', key: `m${i}`, content: set.text(i), tags: set.tags(i), embedding: set.row(i) });
    }
    await database.db.insert(memories).values(values);
    if (start % 20_000 === 0) log(`  memories ${start}/${rows}`);
  }
  const memoriesPerSecond = rows / ((performance.now() - t0) / 1000);
  // The BM25 postings as the server's start adds them to rows saved without (its bulk path).
  await indexUnindexedMemories(database.db, { batchSize: 2000 });
  t0 = performance.now();
  const [doc] = await database.db
    .insert(documents)
    .values({ title: 'bench', contentHash: randomUUID(), format: 'text', text: '' })
    .returning({ id: documents.id });
  for (let start = 0; start < rows; start += batch) {
    const values = [];
    for (let i = start; i < Math.min(rows, start + batch); i++) {
      const id = randomUUID();
      values.push({
        id,
        passageId: id,
        documentId: doc!.id,
        index: i,
        text: set.text(i),
        start: 0,
        end: 0,
        tokenCount: 12,
        tags: set.tags(i),
        embedding: set.row(i),
      });
    }
    await database.db.insert(chunks).values(values);
    if (start % 20_000 === 0) log(`  chunks ${start}/${rows}`);
  }
  const chunksPerSecond = rows / ((performance.now() - t0) / 1000);
  return { memories: memoriesPerSecond, chunks: chunksPerSecond };
}

export async function chunkIndexOf(database: Database): Promise<Map<string, number>> {
  const rows = await queryRows<{ id: string; index: number }>(database.db, sql`SELECT id::text, index FROM chunks`);
  return new Map(rows.map((r) => [r.id, Number(r.index)]));
}
