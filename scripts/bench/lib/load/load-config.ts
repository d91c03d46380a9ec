import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// The bench's settings, from BENCH_* variables (see scripts/bench/load.ts).
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
export const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 'fresh,writers,mix').split(',');
export const PG_URL = process.env.BENCH_DATABASE_URL;
export const DRIVERS = (process.env.BENCH_DRIVERS ?? (PG_URL ? 'pglite,pg' : 'pglite')).split(',') as Driver[];
export const BASELINE_DIR = process.env.BENCH_BASELINE_DIR;
export const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 60);
export const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
export const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 2000);
export const TURNS = Number(process.env.BENCH_TURNS ?? 20_000);
export const DOCUMENTS = Number(process.env.BENCH_DOCUMENTS ?? 20);
export const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 200);
export const WRITER_COUNTS = (process.env.BENCH_WRITERS ?? '0,4,16').split(',').map(Number);
export const WRITERS_S = Number(process.env.BENCH_WRITERS_S ?? 15);
export const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '10,50').split(',').map(Number);
export const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
// The server's port is read off its "memrag listening" line, which it logs at info.
if (!['trace', 'debug', 'info'].includes(LOG_LEVEL)) {
  throw new Error(`BENCH_LOG_LEVEL=${LOG_LEVEL} would hide the line the bench reads the server's port from: use info, debug or trace`);
}
export const EMBEDDER = process.env.BENCH_EMBEDDER ?? 'configured';
export const TURN_EMBEDDER = process.env.BENCH_TURN_EMBEDDER ?? 'fake';
// Flags for the server's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (NODE_OPTIONS refuses --cpu-prof).
export const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
// A heap snapshot of the server at rest after the mix is written here (V8 collects garbage first).
export const HEAP_SNAPSHOT_DIR = process.env.BENCH_HEAP_SNAPSHOT_DIR;
// How the server runs: `dist`, compiled first (`npm run build` in its checkout) and run by node, as
// the Docker image runs it; `tsx`, its TypeScript through tsx's loader, as `npm start` runs it.
export const SERVER_BUILD = ((value) => {
  if (value !== 'dist' && value !== 'tsx') throw new Error(`BENCH_SERVER=${value}: use dist or tsx`);
  return value;
})(process.env.BENCH_SERVER ?? 'dist');
export const WATCHDOG_MS = Number(process.env.BENCH_WATCHDOG_S ?? 3 * 3600) * 1000;

export type Driver = 'pglite' | 'pg';
