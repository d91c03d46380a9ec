/**
 * memrag's filtered vector search side by side with its peers, on one PostgreSQL server and the
 * same generated data: N clustered 512-d vectors with tags on 10%, 2% and 0.2% of the rows.
 *
 *   memrag memories   the memory store's searchByVector (memories table, its HNSW index)
 *   memrag chunks     the document search's vector candidates (chunks table, its m 8 index)
 *   memrag memories, ids only / its statement alone
 *                     the engine's vector statement without a payload; the statement the store
 *                     prepares, run alone on a connection set as its search connections are
 *   PgVector          @mastra/pg's PgVector, HNSW m 16 / ef_construction 128 like memories (installed
 *                     in scripts/bench/peer-deps by the script's prebench step, see load-pg-vector.ts)
 *   hand-written SQL  one statement on memrag's own memories table and index, with memrag's filter
 *                     (tenant, agent, live rows, tags): ef_search 40 (the anchor) and an
 *                     iterative scan set once per connection, an unnamed statement, the vector bound
 *                     in binary; again at memrag's ef_search (80), the anchor at equal recall
 *   exact scan        the same statement with index scans off (timed on BENCH_EXACT_QUERIES)
 *
 * Rows go in as memrag's production path leaves them: the HNSW index exists first (made by
 * ensureVectorSpace, as at start) and every row is inserted into the graph as it comes, in batches
 * of 500 rows per statement; PgVector's rows go through its own upsert. Queries are interleaved:
 * each query runs on every system in turn, the order rotated per query. A second pass leaves out
 * the full-table scans (PgVector's filtered cases, the exact scan), which evict the others' pages
 * from a small shared_buffers. Then memrag's hybrid search with its BM25 side and fusion timed
 * apart (the query embedding is a lookup here, ~0 ms). PGlite runs the memrag cases at
 * BENCH_PGLITE_N rows.
 *
 *   npm run bench:peers
 *   BENCH_N=20000 BENCH_DRIVERS=pg npm run bench:peers
 *   BENCH_REUSE=1 npm run bench:peers            # keep the server's memrag_peers database if filled
 *   BENCH_REUSE=1 BENCH_HYBRID_ONLY=1 BENCH_DRIVERS=pg npm run bench:peers   # the hybrid split alone
 *   BENCH_LAYOUT=toast BENCH_DRIVERS=pg npm run bench:peers   # memories' vectors out of the row (memrag_peers_toast)
 *   BENCH_FILL=bulk BENCH_PGVECTOR=0 ...                       # HNSW built after the rows; PgVector left out
 */
import { clusteredSet } from './lib/clustered-set.js';
import { N, PGLITE_N, QUERIES, TOP_K, DIMS, drivers } from './lib/peers/peers-config.js';
import { ratios } from './lib/peers/peers-measure.js';
import { serverRun, pgliteRun } from './lib/peers/peers-runs.js';

async function main() {
  console.log(`peers bench: ${N} rows on the server (${PGLITE_N} on PGlite), ${DIMS} dims, ${QUERIES} queries per case, topK ${TOP_K}`);
  const set = clusteredSet(Math.max(N, PGLITE_N), QUERIES, DIMS);
  const results: Record<string, string | number>[] = [];
  const hybrids: Record<string, string | number>[] = [];
  if (drivers.includes('pg')) await serverRun(set, results, hybrids);
  if (drivers.includes('pglite')) await pgliteRun(set, results, hybrids);
  console.log('\nsearch, p50/p95 ms, recall@10 against the exact top 10, rows returned per query');
  console.table(results);
  console.log('\nratios (p50)');
  console.table(ratios(results));
  console.log('\nhybrid search (memories), query embedding excluded and reported apart');
  console.table(hybrids);
}

await main();
