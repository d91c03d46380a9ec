import { configDefaults, defineConfig } from 'vitest/config';

/**
 * `npm run test:quick` (TEST_QUICK=1): the edit-and-run loop. Unit and PGlite suites, two files at
 * a time; none of what needs a browser, a PostgreSQL server, a build or a spawned server or CLI, nor
 * the long-running suites (route fuzzing, 200-turn conversations, the model's worker pool, HNSW
 * tables of thousands of rows). `npm test` runs everything.
 */
const quick = process.env.TEST_QUICK === '1';
const NOT_QUICK = [
  'test/console/**',
  'test/robustness/**',
  'test/**/*.postgres.test.ts',
  'test/dist-build.test.ts',
  'test/main.test.ts',
  'test/main-auth.test.ts',
  'test/chat/long-conversation.test.ts',
  'test/chat/small-window-conversation.test.ts',
  'test/memory/memory-store-at-scale.test.ts',
  // PGlite on disk, opened three times: about a minute on two cores.
  'test/db/pglite-backup.test.ts',
  // Each example runs in a process of its own against a listening server (tsx starts each anew).
  'test/examples/**',
  // The CLI on a PGlite directory, through spawnSync: 20 s and more in which the worker cannot answer
  // vitest, whose calls time out after 60 s ("Timeout calling onTaskUpdate") on a loaded machine.
  'test/auth/keys-cli.test.ts',
  // Worker threads running the bundled model, and 2,000-row HNSW tables: 30-50 s each on two cores.
  'test/embeddings/embedding-pool.test.ts',
  'test/db/filtered-vector-search.test.ts',
  'test/db/vector-filter-stats.test.ts',
];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: quick ? [...configDefaults.exclude, ...NOT_QUICK] : configDefaults.exclude,
    // Embedding models and 20k-row databases are slow to build on two cores.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // PGlite instances and the model worker pool are memory-heavy, and the server suites time
    // what they wait for: the full run takes files one after another. The quick run's files are
    // in-memory PGlite and unit tests only, and run two at a time.
    fileParallelism: quick,
    maxWorkers: quick ? 2 : undefined,
    // Files share their worker's module cache instead of importing the app afresh, 3 s a file:
    // no test relies on a module's state, and stubbed globals are restored after each test.
    isolate: false,
    unstubGlobals: true,
    // In-memory databases start from a migrated copy (src/db/in-memory-pglite.ts): 0.8 s, not 2.5 s.
    env: { MEMRAG_PGLITE_COPY: '1', ...(quick ? { TEST_PGLITE_ONLY: '1' } : {}) },
  },
});
