import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Embedding models and 20k-row databases are slow to build on two cores.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // PGlite instances and the model worker pool are memory-heavy: run files one after another.
    fileParallelism: false,
  },
});
