import { asUrgentReads } from '../db/urgent-reads.js';
import { searchRows } from '../retrieval/row-search.js';
import { applyBoosts } from '../retrieval/boost.js';
import { TIME_WINDOW_CANDIDATES } from '../retrieval/time-window-boost.js';
import { readTimeWindow } from '../text/time-window.js';
import { searchMemoriesAsOf } from './memory-as-of-search.js';
import { MEMORY_BOOSTS, MEMORY_CORPUS, memoryFilter } from './memory-corpus.js';
import { type MemoryRow, memoryColumns, toMemory } from './memory-rows.js';
import type { MemoryStoreContext } from './memory-store-context.js';
import type { MemorySearchHit, MemoryStore, SearchMemoriesOptions, VectorSearchOptions } from './memory-types.js';

/** Hybrid, vector and text search over the memories as they are now or (`asOf`) were then. */
export function createMemorySearch(ctx: MemoryStoreContext): Pick<MemoryStore, 'search' | 'searchByVector'> {
  const { db, engine, embedder, analyzer, tenantId, weights } = ctx;

  /** Both searches, as reads a caller waits for (asUrgentReads): with `vector` given, nothing is embedded. */
  const searchHits = (query: string, opts: SearchMemoriesOptions, vector?: number[]) => asUrgentReads(() => rankedHits(query, opts, vector));

  async function rankedHits(query: string, opts: SearchMemoriesOptions, vector?: number[]): Promise<MemorySearchHit[]> {
    const topK = opts.topK ?? 10;
    const filter = memoryFilter(tenantId, opts);
    // A window re-ranks, so it needs candidates from below the first page.
    const timeWindow = opts.timeWindow !== undefined ? opts.timeWindow : query === '' ? null : readTimeWindow(query, opts.asOf ?? new Date());
    const search = {
      mode: opts.mode ?? 'hybrid',
      filter,
      topK: timeWindow ? Math.max(topK, TIME_WINDOW_CANDIDATES) : topK,
      weights: opts.weights ?? weights,
      ...(opts.minScore !== undefined ? { minScore: opts.minScore } : {}),
      ...(vector ? { vector } : {}),
    };
    const found = opts.asOf
      ? await searchMemoriesAsOf({ db, engine, embedder, analyzer, payload: memoryColumns }, query, { ...search, asOf: opts.asOf })
      : (await searchRows<MemoryRow>(engine, db, MEMORY_CORPUS, query, { ...search, payload: memoryColumns })).map(({ row, score, ranks }) => ({
          memory: toMemory(row),
          score,
          ranks,
        }));
    return applyBoosts(MEMORY_BOOSTS, found, { timeWindow }).slice(0, topK);
  }

  const search = (query: string, opts: SearchMemoriesOptions = {}) => searchHits(query, opts);

  // The store's own weights and vector mode, whatever else the options object carries.
  const searchByVector = (vector: number[], opts: VectorSearchOptions = {}) => searchHits('', { ...opts, mode: 'vector', weights }, vector);

  return { search, searchByVector };
}
