import { sql } from 'drizzle-orm';
import type { BackfillStep } from '../retrieval/backfill-step.js';
import { regroupLegacyPassages } from './passage-regrouping.js';

/**
 * Documents' share of the start-up backfill: those chunked before passages. `countTokens` is the
 * embedder's tokenizer, as the ingest counts passages.
 */
export function passageBackfill(options: { countTokens?: (text: string) => number } = {}): BackfillStep {
  return {
    stage: 'passages',
    pending: () => sql`EXISTS (SELECT 1 FROM documents WHERE passage_tokens IS NULL)`,
    async run({ db, analyzer, report }) {
      report(0, 1);
      const documentsRegrouped = await regroupLegacyPassages(db, { analyzer, countTokens: options.countTokens });
      report(1, 1);
      return { documentsRegrouped };
    },
  };
}
