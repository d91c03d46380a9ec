/**
 * Where a row's vector is stored, and what an exact scan of one namespace costs for it:
 * `npm run bench:vector-layout` (PGlite, and the server BENCH_DATABASE_URL or TEST_DATABASE_URL
 * names, in a fresh database of its own).
 *
 * A table shaped as the vector tables are (a namespace, a text, metadata, a 512-d vector), 20,000
 * rows in 80 namespaces, then 60 exact scans of one namespace's 250 rows by distance, in three
 * layouts: as pgvector stores its type (out of line), the vector column `MAIN`, and the toaster's
 * target at a full page (`toast_tuple_target = 8160`, what migration 0018 sets). Prints p50/p90
 * and the sizes of heap and TOAST. Figures: docs/benchmarks/load.md.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import pg from 'pg';
import { freshServerDatabase } from './lib/fresh-server-database.js';

const DIMS = 512;
const ROWS = Number(process.env.BENCH_ROWS ?? 20_000);
const NAMESPACES = 80;
const SCANS = 60;
const LAYOUTS = {
  'as pgvector stores it': '',
  'vector MAIN': 'ALTER TABLE layout ALTER COLUMN embedding SET STORAGE MAIN',
  'toast_tuple_target = 8160': 'ALTER TABLE layout SET (toast_tuple_target = 8160)',
} as const;

// A fixed sequence, so that both drivers and every layout hold the same rows.
let seed = 7;
const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
const vectorText = () => `[${Array.from({ length: DIMS }, () => (random() - 0.5).toFixed(5)).join(',')}]`;
const words = () => Array.from({ length: 30 }, () => Math.floor(random() * 36 ** 6).toString(36)).join(' ');

type Query = (statement: string, params?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function measure(driver: string, query: Query) {
  for (const [layout, statement] of Object.entries(LAYOUTS)) {
    seed = 7;
    await query('DROP TABLE IF EXISTS layout');
    await query(`CREATE TABLE layout (id serial PRIMARY KEY, namespace int, content text, metadata jsonb, embedding vector(${DIMS}))`);
    if (statement) await query(statement);
    for (let start = 0; start < ROWS; start += 500) {
      const params: unknown[] = [];
      const values: string[] = [];
      for (let i = start; i < Math.min(ROWS, start + 500); i++) {
        params.push(i % NAMESPACES, words(), vectorText());
        values.push(`($${params.length - 2}, $${params.length - 1}, '{}', $${params.length}::vector)`);
      }
      await query(`INSERT INTO layout (namespace, content, metadata, embedding) VALUES ${values.join(', ')}`, params);
    }
    await query('CREATE INDEX ON layout (namespace)');
    await query('ANALYZE layout');
    const times: number[] = [];
    for (let i = 0; i < SCANS; i++) {
      const q = vectorText();
      const t0 = performance.now();
      await query('SELECT id, length(content), embedding <=> $1::vector AS distance FROM layout WHERE namespace = $2 ORDER BY distance LIMIT 50', [
        q,
        i % NAMESPACES,
      ]);
      times.push(performance.now() - t0);
    }
    const [size] = (
      await query(
        `SELECT pg_relation_size('layout') AS heap, coalesce(pg_total_relation_size(nullif(reltoastrelid, 0)), 0) AS toast FROM pg_class WHERE relname = 'layout'`,
      )
    ).rows;
    const mb = (x: unknown) => (Number(x) / 2 ** 20).toFixed(1);
    console.log(
      `| ${driver.padEnd(10)} | ${layout.padEnd(26)} | ${pct(times, 50).toFixed(2).padStart(5)} | ${pct(times, 90).toFixed(2).padStart(5)} | ${mb(size!.heap).padStart(7)} | ${mb(size!.toast).padStart(8)} |`,
    );
  }
  await query('DROP TABLE layout');
}

console.log(`exact scan of one namespace's ${ROWS / NAMESPACES} rows out of ${ROWS} (${DIMS}-d), ${SCANS} scans, ms`);
console.log('| driver     | layout                     |   p50 |   p90 | heap MB | TOAST MB |');
const lite = await PGlite.create({ extensions: { vector } });
await lite.exec('CREATE EXTENSION vector');
await measure('PGlite', (s, p) => lite.query(s, p as never[]));
await lite.close();

const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (serverUrl) {
  const database = await freshServerDatabase(serverUrl, 'memrag_bench_vector_layout');
  const pool = new pg.Pool({ connectionString: database.url });
  try {
    await pool.query('CREATE EXTENSION IF NOT EXISTS vector');
    await measure('PostgreSQL', (s, p) => pool.query(s, p));
  } finally {
    await pool.end();
    await database.drop();
  }
}
