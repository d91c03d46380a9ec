import { sql } from 'drizzle-orm';
import type { BackfillStep } from '../retrieval/backfill-step.js';
import { turnKeysAnalyzer } from './turn-corpus.js';
import { reindexStaleTurns } from './turn-text-index.js';

/** Turns' share of the start-up backfill: postings of another analyzer, and turns an interrupted rebuild left unindexed. */
export function turnBackfill(): BackfillStep {
  return {
    stage: 'turns',
    pending: (analyzer) =>
      sql`EXISTS (SELECT 1 FROM turn_corpus_stats WHERE analyzer_id <> ${turnKeysAnalyzer(analyzer).id})
            OR EXISTS (SELECT 1 FROM turns WHERE bm25_length IS NULL)`,
    async run({ db, analyzer, report }) {
      report(0, 1);
      return { turnsReindexed: await reindexStaleTurns(db, { analyzer }) };
    },
  };
}
