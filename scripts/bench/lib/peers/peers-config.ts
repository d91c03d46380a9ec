import { z } from 'zod';
import type { TagCase } from '../clustered-set.js';

// The bench's sizes and switches, from BENCH_* variables (see scripts/bench/peers.ts), and what a system is.
export const N = Number(process.env.BENCH_N ?? 100_000);
export const PGLITE_N = Number(process.env.BENCH_PGLITE_N ?? Math.min(N, 10_000));
export const QUERIES = Number(process.env.BENCH_QUERIES ?? 100);
export const EXACT_QUERIES = Number(process.env.BENCH_EXACT_QUERIES ?? 10);
export const TOP_K = 10;
export const DIMS = 512;
export const drivers = (process.env.BENCH_DRIVERS ?? 'pg,pglite').split(',');
export const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/memrag_test';
export const reuse = process.env.BENCH_REUSE === '1';
// BENCH_HYBRID_ONLY=1: the hybrid search's split alone (with BENCH_REUSE, on rows already there).
export const hybridOnly = process.env.BENCH_HYBRID_ONLY === '1';
/**
 * BENCH_LAYOUT: where the memories' vectors are stored, set before the rows go in. `inrow` keeps
 * the vector in its heap row (toast_tuple_target 8160, migration 0018's), `toast` moves it out as
 * pgvector stores its type (PostgreSQL's default target, 2 KB). Unset: as the migrations leave it.
 */
export const layout = z
  .enum(['inrow', 'toast'])
  .optional()
  .parse(process.env.BENCH_LAYOUT || undefined);
/**
 * BENCH_FILL=bulk: memrag's rows go in before their HNSW indexes, built afterwards in one go (much
 * faster than a graph insert per row on a busy machine, and a graph built differently: compare
 * systems within a run, never a bulk run with a row-by-row one).
 */
export const bulkFill = process.env.BENCH_FILL === 'bulk';
/** BENCH_PGVECTOR=0 leaves @mastra/pg's PgVector out (neither filled nor measured). */
export const withPgVector = process.env.BENCH_PGVECTOR !== '0';
/** The server's database for the run: BENCH_DB, else memrag_peers (with the layout's name when one is set). */
export const serverDatabase = process.env.BENCH_DB ?? (layout ? `memrag_peers_${layout}` : 'memrag_peers');
export const MASTRA_INDEX = 'peers_bench';
export const HAND_EF_SEARCH = 40;
export const log = (m: string) => console.error(m);

/** One system's search: the generated row numbers of its top 10 for query q. */
export interface System {
  name: string;
  search(q: number, c: TagCase): Promise<number[]>;
  /** Leaves a case out (the full-table scans of the second pass). */
  skip?(c: TagCase, pass: number): boolean;
  queries?: number;
}
