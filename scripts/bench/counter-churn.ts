/**
 * What single memory saves leave behind in the counter tables every writer rewrites (document
 * frequencies in `memory_term_stats`, filter counts in `vector_filter_stats`, the totals in
 * `memory_corpus_stats`), on a PostgreSQL server: updates, how many of them were HOT (the new
 * version on the old one's page: no index entry, pruned without a vacuum), dead versions left, and
 * the tables' size. Two fresh databases in one run, the same saves into each: the migrations' own
 * settings (fillfactor 70 and 50, migration 0011), and the same tables with fillfactor reset to
 * the default of 100 before any row is written, the anchor.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx scripts/bench/counter-churn.ts
 *
 * Also BENCH_SAVES (default 2,000). Autovacuum is off for the tables during the run, so what is
 * counted is what the writes left, not when a vacuum happened to pass.
 */
import { sql } from 'drizzle-orm';
import { openDatabase } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { textArray } from '../../src/db/sql-arrays.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { seededRandom } from '../../testkit/vector-fixtures.js';
import { freshServerDatabase } from './lib/fresh-server-database.js';

const SAVES = Number(process.env.BENCH_SAVES ?? 2000);
const COUNTERS = ['memory_term_stats', 'vector_filter_stats', 'memory_corpus_stats'];
const WORDS = (
  'alice bob carol dave tea coffee green black oolong morning afternoon evening meeting project deadline budget ' +
  'report garden tomato rose basil travel paris tokyo lisbon train flight hotel birthday march april friend family'
).split(' ');

async function run(label: string, resetFillfactor: boolean) {
  const server = await freshServerDatabase(process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL, 'memrag_bench_churn');
  const database = await openDatabase({ url: server.url, analyzeIntervalMs: 3_600_000 });
  try {
    const { db } = database;
    for (const table of COUNTERS) {
      await db.execute(sql.raw(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`));
      if (resetFillfactor) await db.execute(sql.raw(`ALTER TABLE ${table} RESET (fillfactor)`));
    }
    const store = createPgMemoryStore({ db, embedder: createHashEmbedder(64) });
    const random = seededRandom(7);
    const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]!).join(' ');
    const t0 = performance.now();
    for (let i = 0; i < SAVES; i++) await store.save({ key: `k${i}`, content: `${words(14)}.`, tags: [WORDS[i % 12]!] });
    const seconds = (performance.now() - t0) / 1000;
    await db.execute(sql`SELECT pg_stat_force_next_flush()`);
    await new Promise((r) => setTimeout(r, 1500));
    const rows = await queryRows<{ table: string; updates: number; hot: number; dead: number; kb: number }>(
      db,
      sql`SELECT relname AS table, n_tup_upd::int AS updates, n_tup_hot_upd::int AS hot, n_dead_tup::int AS dead,
            (pg_total_relation_size(relid) / 1024)::int AS kb
          FROM pg_stat_user_tables WHERE relname = ANY(${textArray(COUNTERS)}) ORDER BY relname`,
    );
    return rows.map((r) => ({
      settings: label,
      table: r.table,
      updates: r.updates,
      'HOT %': Math.round((1000 * r.hot) / Math.max(1, r.updates)) / 10,
      'dead rows': r.dead,
      'size kB': r.kb,
      'saves/s': Math.round(SAVES / seconds),
    }));
  } finally {
    await database.close();
    await server.drop();
  }
}

const rows = [...(await run('fillfactor 100 (default)', true)), ...(await run('migration 0011', false))];
console.table(rows);
