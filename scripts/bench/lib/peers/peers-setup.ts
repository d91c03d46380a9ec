import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import type { Database } from '../../../../src/db/database.js';
import { queryRows } from '../../../../src/db/query-rows.js';
import { chunks, documents, memories } from '../../../../src/db/schema/index.js';
import type { Embedder } from '../../../../src/embeddings/embedder.js';
import { indexUnindexedMemories } from '../../../../src/memory/memory-text-index.js';
import type { ClusteredSet } from '../clustered-set.js';
import { N, DIMS, serverUrl, reuse, MASTRA_INDEX, log } from './peers-config.js';

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
          `SELECT (SELECT count(*) FROM memories)::int AS m, (SELECT count(*) FROM chunks)::int AS c, (SELECT count(*) FROM ${MASTRA_INDEX})::int AS v`,
        ),
      )
      .then((r) => r.rows[0] as { m: number; c: number; v: number })
      .catch(() => null);
    await probe.end().catch(() => {});
    if (n && n.m === N && n.c === N && n.v === N) return { url: url.toString(), filled: true };
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
