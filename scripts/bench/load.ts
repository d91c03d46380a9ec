/**
 * Load on the HTTP API as operators meet it: `src/main.ts` in a child process on 127.0.0.1, a new
 * store for every case (embedded PGlite in a temporary directory, or a fresh database on the
 * PostgreSQL server BENCH_DATABASE_URL names), and clients in this process. Scenarios:
 *
 *  - `fresh`: a store used at once after a bulk load, by one client. 2,000 memories saved through
 *    `/v1/memories/batch`, then memory search (hybrid, a tag filter) at once; and 20,000 turns
 *    imported as conversations, then turn search at once. p50/p99 of each search.
 *  - `writers`: one client searching memories while 0, 4 and 16 others save memories: search
 *    p50/p99 and writes/s at each count.
 *  - `mix`: 32 clients for 60 s right after seeding 2,000 memories and 20 documents: 50% memory
 *    search with a tag, 25% saves, 15% chats (a scripted OpenAI-compatible model in this process,
 *    memory extraction on), 10% document search. req/s, p50/p99 per kind, failures (any status
 *    but 2xx, 429 and 503 counted apart), the pool's waits, and the server's resident memory idle
 *    before any data and after the load.
 *  - `mix-kinds`: each kind of the mix alone (BENCH_CLIENTS clients, BENCH_DURATION_S / 2 s each,
 *    after the same seeding): req/s, p50/p99 and CPU ms per request in the server (its main thread
 *    apart), PostgreSQL and the bench, and each kind's part of the mix's CPU. Not run by default.
 *  - `kinds`: the older per-kind cases (memory search, knowledge search, memory save alone), by
 *    autocannon at BENCH_CONNECTIONS.
 *
 * BENCH_BASELINE_DIR names another checkout (with its node_modules) run the same way in the same
 * run, case by case, alternating with this one: the before/after comparison on this noisy machine.
 *
 *   npm run bench:load
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_BASELINE_DIR=/tmp/base npm run bench:load
 *   BENCH_SCENARIOS=mix BENCH_DRIVERS=pg BENCH_DURATION_S=20 npm run bench:load
 *
 * Also BENCH_MEMORIES, BENCH_TURNS (the fresh turn import; imported with BENCH_TURN_EMBEDDER,
 * by default `fake`, an instant embedder in this process, since the bundled model takes minutes
 * over 20k turns), BENCH_CLIENTS, BENCH_EMBEDDER (`fake` for every case), BENCH_LOG_LEVEL,
 * BENCH_SERVER_NODE_ARGS (flags for the server's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`),
 * BENCH_HEAP_SNAPSHOT_DIR (a heap snapshot of the server at rest after the mix, written there).
 * Bounded: a watchdog stops everything, and every request has a 60 s timeout.
 */
import os from 'node:os';
import { resolve } from 'node:path';
import { repoRoot, SCENARIOS, DRIVERS, BASELINE_DIR, EMBEDDER, WATCHDOG_MS, type Driver } from './lib/load/load-config.js';
import { type Version, startScriptedModel, stopSharedProcesses } from './lib/load/load-server.js';
import { type Row, freshMemories, freshTurns, writers, mix, mixKinds } from './lib/load/load-scenarios.js';
import { kinds } from './lib/load/load-kinds.js';

async function main() {
  const watchdog = setTimeout(() => {
    console.error(`bench: still running after ${WATCHDOG_MS / 1000} s; stopping`);
    process.exit(1);
  }, WATCHDOG_MS);
  watchdog.unref();
  await startScriptedModel();
  const versions: Version[] = [
    ...(BASELINE_DIR ? [{ name: 'before', dir: resolve(BASELINE_DIR) }] : []),
    { name: BASELINE_DIR ? 'after' : 'this', dir: repoRoot },
  ];
  console.log(
    `bench:load on ${os.availableParallelism()} cores (load average ${os.loadavg()[0]!.toFixed(1)}); scenarios ${SCENARIOS.join(', ')}; ` +
      `drivers ${DRIVERS.join(', ')}; versions ${versions.map((v) => `${v.name} (${v.dir})`).join(', ')}; embedder ${EMBEDDER}`,
  );
  try {
    const each = async (label: string, run: (version: Version, driver: Driver) => Promise<Row | Row[]>) => {
      const rows: Row[] = [];
      for (const driver of DRIVERS) {
        for (const version of versions) {
          const out = await run(version, driver);
          for (const row of [out].flat()) {
            console.log(`${label}: ${JSON.stringify(row)}`);
            rows.push(row);
          }
        }
      }
      // One table per shape of row (the mix has a summary row and a row per kind).
      const shapes = new Map<string, Row[]>();
      for (const row of rows) {
        const shape = Object.keys(row).join();
        shapes.set(shape, [...(shapes.get(shape) ?? []), row]);
      }
      for (const group of shapes.values()) console.table(group);
    };
    for (const scenario of SCENARIOS) {
      if (scenario === 'fresh') {
        await each('fresh', freshMemories);
        await each('fresh', freshTurns);
      } else if (scenario === 'writers') await each('writers', writers);
      else if (scenario === 'mix') await each('mix', mix);
      else if (scenario === 'mix-kinds') await each('mix-kinds', mixKinds);
      else if (scenario === 'kinds') await each('kinds', kinds);
      else throw new Error(`unknown scenario ${scenario}`);
    }
  } finally {
    await stopSharedProcesses();
    clearTimeout(watchdog);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
