import { turnBackfill } from './conversations/turn-backfill.js';
import { passageBackfill } from './documents/passage-backfill.js';
import type { Embedder } from './embeddings/embedder.js';
import { memoryBackfill } from './memory/memory-backfill.js';
import type { BackfillStep } from './retrieval/backfill-step.js';

/**
 * The corpora whose BM25 indexes the start-up backfill brings up to date, in the order the job
 * runs them: each feature declares its own step, and the job (src/jobs/maintenance-jobs.ts) knows none.
 */
export function backfillSteps(embedder: Pick<Embedder, 'countTokens'>): BackfillStep[] {
  return [memoryBackfill(), turnBackfill(), passageBackfill({ countTokens: embedder.countTokens?.bind(embedder) })];
}
