/**
 * The turns' HNSW build: what each graph costs to insert into and what it finds. LongMemEval_S's
 * tuning turns (../shared/datasets/longmemeval-s, each distinct session once, a turn as its user
 * message and replies) embedded with the configured model (EMBEDDING_PROVIDER: `static` in
 * seconds, `bundled` at ~35 turns/s), inserted five at a time, as an import writes a session, into
 * one table per BENCH_HNSW graph (m:ef_construction) on the PostgreSQL server; then the 87
 * questions unfiltered (one scope of every turn: a user's own turns are ranked exactly below 1,000)
 * at each BENCH_EF, recall@10 and @50 against the exact nearest and the p50.
 *
 *   npm run bench:hnsw-turns
 *   EMBEDDING_PROVIDER=bundled BENCH_TURNS=6000 npm run bench:hnsw-turns
 *   BENCH_HNSW=16:64,12:64,8:64 BENCH_EF=80,120,160,250 npm run bench:hnsw-turns
 *
 * The server is BENCH_DATABASE_URL (else TEST_DATABASE_URL, else the local memrag_test); the
 * tables are made in a database of their own, `memrag_bench_hnsw_turns`, dropped at the end.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import pgvector from 'pgvector';
import { loadConfig } from '../../src/config/config.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { splitIntoBatches } from '../../src/embeddings/split-into-batches.js';
import { percentile } from './lib/clustered-set.js';
import { freshServerDatabase } from './lib/fresh-server-database.js';
import { readLongMemEval, sessionTurns } from './lib/longmemeval.js';

const TURNS = Number(process.env.BENCH_TURNS ?? 20_000);
const GRAPHS = (process.env.BENCH_HNSW ?? '16:64,8:64').split(',').map((g) => g.split(':').map(Number) as [number, number]);
const EFS = (process.env.BENCH_EF ?? '80,160,250').split(',').map(Number);
const SESSION_TURNS = 5;
const KS = [10, 50];

async function embedAll(embedder: Embedder, texts: string[]): Promise<number[][]> {
  const out: number[][] = [];
  for (const batch of splitIntoBatches(texts, 64)) out.push(...(await embedder.embed(batch)));
  return out;
}

function turnTexts(): string[] {
  const seen = new Set<string>();
  const texts: string[] = [];
  for (const q of readLongMemEval()) {
    q.haystack_sessions.forEach((session, i) => {
      const id = q.haystack_session_ids[i]!;
      if (seen.has(id)) return;
      seen.add(id);
      for (const t of sessionTurns(session)) texts.push(`${t.question}\n${t.answers.join('\n')}`);
    });
  }
  return texts;
}

async function main(): Promise<void> {
  const questions = readLongMemEval().map((q) => q.question);
  const texts = turnTexts().slice(0, TURNS);
  const embedder = await createEmbedder(loadConfig());
  const started = performance.now();
  const vectors = (await embedAll(embedder, texts)).map((v) => pgvector.toSql(v) as string);
  const queries = (await embedAll(embedder, questions)).map((v) => pgvector.toSql(v) as string);
  await embedder.close();
  console.log(`${embedder.id}: ${texts.length} turns and ${questions.length} questions embedded in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const database = await freshServerDatabase(process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL, 'memrag_bench_hnsw_turns');
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS vector');
    const table = ([m, efc]: [number, number]) => `turns_m${Math.trunc(m)}_ef${Math.trunc(efc)}`;
    for (const graph of GRAPHS) {
      await client.query(`CREATE TABLE ${table(graph)} (id int PRIMARY KEY, embedding vector(${embedder.dimensions}))`);
      await client.query(
        `CREATE INDEX ON ${table(graph)} USING hnsw (embedding vector_cosine_ops) WITH (m = ${Math.trunc(graph[0])}, ef_construction = ${Math.trunc(graph[1])})`,
      );
    }
    // Interleaved session by session, so that a change of the machine's load hits every graph alike.
    const insertSeconds = GRAPHS.map(() => 0);
    for (let i = 0; i < vectors.length; i += SESSION_TURNS) {
      const ids = Array.from({ length: Math.min(SESSION_TURNS, vectors.length - i) }, (_, j) => i + j);
      for (const [g, graph] of GRAPHS.entries()) {
        const t = performance.now();
        await client.query(`INSERT INTO ${table(graph)} SELECT * FROM unnest($1::int[], $2::text[]::vector[])`, [ids, ids.map((id) => vectors[id]!)]);
        insertSeconds[g]! += (performance.now() - t) / 1000;
      }
    }
    await client.query('SET enable_indexscan = off');
    const exact: number[][] = [];
    for (const q of queries) {
      const { rows } = await client.query<{ id: number }>(`SELECT id FROM ${table(GRAPHS[0]!)} ORDER BY embedding <=> $1::vector LIMIT ${Math.max(...KS)}`, [
        q,
      ]);
      exact.push(rows.map((r) => r.id));
    }
    await client.query('SET enable_indexscan = on');
    const rows: Record<string, string | number>[] = [];
    for (const [g, graph] of GRAPHS.entries()) {
      for (const ef of EFS) {
        await client.query(`SET hnsw.ef_search = ${Math.trunc(ef)}`);
        const row: Record<string, string | number> = {
          graph: `m ${graph[0]}, ef_construction ${graph[1]}`,
          'insert s': insertSeconds[g]!.toFixed(1),
          ef_search: ef,
        };
        for (const k of KS) {
          let found = 0;
          const times: number[] = [];
          for (const [i, q] of queries.entries()) {
            const t = performance.now();
            const { rows: got } = await client.query<{ id: number }>(`SELECT id FROM ${table(graph)} ORDER BY embedding <=> $1::vector LIMIT ${k}`, [q]);
            times.push(performance.now() - t);
            const ids = new Set(got.map((r) => r.id));
            found += exact[i]!.slice(0, k).filter((id) => ids.has(id)).length;
          }
          row[`recall@${k}`] = (found / (queries.length * k)).toFixed(3);
          row[`p50 ms @${k}`] = percentile(times, 50).toFixed(2);
        }
        rows.push(row);
      }
    }
    console.table(rows);
  } finally {
    await client.end();
    await database.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
