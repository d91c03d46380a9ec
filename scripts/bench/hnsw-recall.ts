/**
 * Unfiltered recall@10 of the memories' HNSW graph against the exact top 10, by ef_search and by
 * how the graph was built, on the database `npm run bench:peers` filled (its clustered 512-d rows,
 * the same seed): first the graph as the bench built it (rows inserted one by one into an existing
 * index, as memrag does), then graphs built in bulk over the same rows by CREATE INDEX for each
 * BENCH_BUILDS setting (m:ef_construction). The bulk builds are dropped at the end.
 *
 *   BENCH_DB=memrag_peers npm run bench:hnsw-recall
 *   BENCH_EF=40,80,100 BENCH_BUILDS=16:64,16:128,24:64 npm run bench:hnsw-recall
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { vectorToBinary } from '../../src/db/vector-wire-format.js';
import { clusteredSet, exactTopK, percentile } from './lib/clustered-set.js';

const N = Number(process.env.BENCH_N ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 100);
const efs = (process.env.BENCH_EF ?? '40,80,100').split(',').map(Number);
const builds = (process.env.BENCH_BUILDS ?? '16:64,16:128').split(',').map((s) => s.split(':').map(Number) as [number, number]);
const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/memrag_test';
const url = new URL(serverUrl);
url.pathname = `/${process.env.BENCH_DB ?? 'memrag_peers'}`;

async function main() {
  const set = clusteredSet(N, QUERIES);
  const truth = Array.from({ length: QUERIES }, (_, q) => exactTopK(set, q, N, () => true, 10));
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  const { rows: count } = await client.query('SELECT count(*)::int AS n FROM memories');
  if (count[0].n !== N) throw new Error(`memories holds ${count[0].n} rows, not ${N}: run bench:peers with BENCH_N=${N} first`);
  const results: Record<string, string | number>[] = [];
  const measure = async (graph: string) => {
    for (const ef of efs) {
      const times: number[] = [];
      let hits = 0;
      await client.query(`SET hnsw.ef_search = ${Math.trunc(ef)}`);
      for (let q = -3; q < QUERIES; q++) {
        const t = performance.now();
        const { rows } = await client.query<{ key: string }>({
          text: `SELECT key FROM memories ORDER BY embedding <=> $1::vector LIMIT 10`,
          values: [vectorToBinary(set.query(Math.max(q, 0)))],
        });
        if (q >= 0) times.push(performance.now() - t);
        if (q < 0) continue;
        const want = new Set(truth[q]);
        hits += rows.filter((r) => want.has(Number(r.key.slice(1)))).length;
      }
      const r = { graph, ef_search: ef, 'recall@10': +(hits / (QUERIES * 10)).toFixed(3), 'p50 ms': +percentile(times, 50).toFixed(2) };
      results.push(r);
      console.error(JSON.stringify(r));
    }
  };
  const { rows: idx } = await client.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'memories_embedding_hnsw_idx'`);
  await measure(`as built: ${String(idx[0]?.indexdef ?? 'none').replace(/.*WITH /, '')}`);
  // The bench's own index is set aside (in a transaction that is rolled back) while a bulk build is searched.
  await client.query(`SET maintenance_work_mem = '1GB'`);
  for (const [m, efc] of builds) {
    await client.query('BEGIN');
    await client.query('DROP INDEX IF EXISTS memories_embedding_hnsw_idx');
    const t = performance.now();
    await client.query(`CREATE INDEX bench_hnsw ON memories USING hnsw (embedding vector_cosine_ops) WITH (m = ${m}, ef_construction = ${efc})`);
    const seconds = (performance.now() - t) / 1000;
    await measure(`bulk m ${m}, ef_construction ${efc} (built in ${seconds.toFixed(0)} s)`);
    await client.query('ROLLBACK');
  }
  await client.end();
  console.table(results);
}

await main();
