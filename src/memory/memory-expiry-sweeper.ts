import { and, eq, sql } from 'drizzle-orm';
import { type PeriodicSweep, startPeriodicSweep } from '../background/periodic-sweep.js';
import type { Db } from '../db/database.js';
import { memories } from '../db/schema/index.js';
import { type Analyzer, defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { createCorpusIndex } from '../retrieval/corpus-index.js';
import { MEMORY_CORPUS } from './memory-corpus.js';
import { recordRemovals } from './memory-history.js';

export interface SweepOptions {
  analyzer?: Analyzer;
  /** Memories deleted per transaction, so a sweep never holds a tenant's writers for long. Default 500. */
  batchSize?: number;
}

const expired = sql`${memories.expiresAt} <= now()`;

/**
 * Deletes every expired memory with its postings, recording an `expired` event for each. Readers
 * stop seeing a memory the moment it expires (every query filters on `expires_at`); this only
 * reclaims the rows and writes their history, so it may run late without anyone noticing.
 */
export async function sweepExpiredMemories(db: Db, options: SweepOptions = {}): Promise<number> {
  const index = createCorpusIndex(MEMORY_CORPUS, options.analyzer ?? defaultAnalyzer);
  const batchSize = options.batchSize ?? 500;
  // The partial index on expires_at answers this without reading memories that never expire.
  const tenants = await db.selectDistinct({ tenantId: memories.tenantId }).from(memories).where(expired);
  let swept = 0;
  for (const { tenantId } of tenants) {
    for (;;) {
      const n = await db.transaction(async (tx) => {
        await index.lock(tx, tenantId, false);
        const batch = and(
          eq(memories.tenantId, tenantId),
          sql`${memories.id} IN (SELECT ${memories.id} FROM ${memories} WHERE ${memories.tenantId} = ${tenantId} AND ${expired} LIMIT ${batchSize})`,
        )!;
        // Re-checked under the lock: a save may have given the key a new life since the read above.
        await recordRemovals(tx, tenantId, 'expired', { type: 'system' }, batch);
        return index.deleteRows(tx, tenantId, batch);
      });
      swept += n;
      if (n < batchSize) break;
    }
  }
  return swept;
}

/** Sweeps every `intervalMs`; a failed sweep is reported and the next one tries again. */
export function startExpirySweeper(db: Db, intervalMs: number, onError: (err: unknown) => void, options: SweepOptions = {}): PeriodicSweep {
  return startPeriodicSweep(() => sweepExpiredMemories(db, options), intervalMs, onError);
}
