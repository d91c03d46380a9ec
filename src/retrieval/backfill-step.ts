import type { SQL } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import type { Analyzer } from './bm25/analyzer.js';

/**
 * One corpus's share of the start-up upkeep of the BM25 indexes. The corpus's feature declares it
 * and the composition root hands the list to the backfill job, so the job runs every corpus's
 * upkeep without knowing any of them.
 */
export interface BackfillStep {
  /** The stage its progress is reported under. */
  stage: string;
  /** A condition true while the step has work: the start-up probe ORs every step's into one query. */
  pending(analyzer: Analyzer): SQL;
  /** Brings the corpus up to date, resuming where an interrupted run stopped; what it did goes into the job's result. */
  run(context: BackfillContext): Promise<Record<string, unknown>>;
}

export interface BackfillContext {
  db: Db;
  /** Undefined: each corpus's default. */
  analyzer: Analyzer | undefined;
  /** Progress of this step, under its stage. */
  report(done: number, total: number): void;
}
