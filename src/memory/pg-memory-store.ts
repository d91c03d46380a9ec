import { createMemoryChanges } from './memory-changes.js';
import { createMemoryReads } from './memory-reads.js';
import { createMemoryRemovals } from './memory-removals.js';
import { createMemorySaves } from './memory-saves.js';
import { type PgMemoryStoreOptions, createMemoryStoreContext } from './memory-store-context.js';
import { createMemorySearch } from './memory-store-search.js';
import type { MemoryStore } from './memory-types.js';
import { createMemoryWrite } from './memory-write.js';

export { MAX_BATCH_MEMORIES } from './memory-saves.js';
export type { PgMemoryStoreOptions } from './memory-store-context.js';

/**
 * The memory store on Postgres (or PGlite), composed of its parts over one shared context: the
 * writes by key (memory-saves.ts) and by decision (memory-changes.ts), both through one write with
 * its history (memory-write.ts); the reads (memory-reads.ts, as-of in memory-as-of-reads.ts), the
 * searches (memory-store-search.ts) and the deletions (memory-removals.ts).
 */
export function createPgMemoryStore(options: PgMemoryStoreOptions): MemoryStore {
  const ctx = createMemoryStoreContext(options);
  const write = createMemoryWrite(ctx);
  return {
    ...createMemorySaves(ctx, write),
    ...createMemoryChanges(ctx, write),
    ...createMemoryReads(ctx),
    ...createMemorySearch(ctx),
    ...createMemoryRemovals(ctx),
  };
}
