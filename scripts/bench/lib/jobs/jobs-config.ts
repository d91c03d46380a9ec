import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// The bench's sizes and parts, from BENCH_* variables (see scripts/bench/jobs.ts), the figures the parts
// leave for the summary, and the small helpers they share.
export const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../../..');
export const N = Number(process.env.BENCH_JOBS ?? 200);
export const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 4);
export const DOCS_PER_BLOCK = Number(process.env.BENCH_DOCS ?? 16);
export const THROUGHPUT_BLOCKS = Number(process.env.BENCH_THROUGHPUT_BLOCKS ?? 2);
export const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 5);
export const serverUrl = process.env.BENCH_DATABASE_URL;
export const parts = new Set((process.env.BENCH_PARTS ?? 'queue,pipeline,throughput,latency').split(',').map((p) => p.trim()));
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const fmt = (xs: number[], digits = 2) => xs.map((x) => x.toFixed(digits)).join(', ');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const summary: Record<string, number> = {};
