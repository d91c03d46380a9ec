import { sql } from 'drizzle-orm';
import { queryRows } from '../db/query-rows.js';
import type { BackfillStep } from '../retrieval/backfill-step.js';
import { indexUnindexedMemories } from './memory-text-index.js';

/** Memories' share of the start-up backfill: those saved before their index existed, and postings of another analyzer. */
export function memoryBackfill(): BackfillStep {
  return {
    stage: 'memories',
    pending: (analyzer) =>
      sql`EXISTS (SELECT 1 FROM memories WHERE bm25_length IS NULL)
            OR EXISTS (SELECT 1 FROM memory_corpus_stats WHERE analyzer_id <> ${analyzer.id})`,
    async run({ db, analyzer, report }) {
      const [counts] = await queryRows<{ memories: number }>(db, sql`SELECT count(*)::int AS memories FROM memories WHERE bm25_length IS NULL`);
      const unindexed = Number(counts?.memories ?? 0);
      report(0, unindexed);
      const memories = await indexUnindexedMemories(db, {
        analyzer,
        // A rebuild (another analyzer) indexes more than were unindexed at the start.
        onProgress: (indexed) => report(indexed, Math.max(unindexed, indexed)),
      });
      return { memoriesIndexed: memories.indexed, memoriesRebuilt: memories.rebuilt };
    },
  };
}
