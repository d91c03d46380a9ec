import type { PGlite } from '@electric-sql/pglite';
import { quoteIdentifier } from './sql-identifier.js';

export interface AutoAnalyzeOptions {
  /** How often the write counters are checked. Default 5 s. */
  intervalMs?: number;
}

export interface AutoAnalyze {
  /** One check now: analyzes the tables past the threshold and returns their names. */
  runOnce(): Promise<string[]>;
  /** Stops the timer and waits for a check in progress, so the database can be closed. */
  stop(): Promise<void>;
}

export const DEFAULT_AUTO_ANALYZE_INTERVAL_MS = 5_000;

/**
 * What autovacuum would do for planner statistics, for PGlite, which has no autovacuum: a table is
 * analyzed once the rows written since its last ANALYZE pass autovacuum's own threshold (50 rows
 * plus 10% of the table, from the server settings), so statistics follow a growing table.
 *
 * Stale statistics cost more than bad estimates. Cached plans are replanned only when their tables'
 * statistics change, and foreign-key checks run cached plans: the check on `postings.chunk_id`,
 * planned while `chunks` was empty, kept its sequential scan as `chunks` grew, until a posting cost
 * 0.2 ms to insert at a few thousand chunks and ingestion slowed by the size of the corpus.
 */
export function startAutoAnalyze(client: PGlite, options: AutoAnalyzeOptions = {}): AutoAnalyze {
  let running: Promise<string[]> | undefined;

  async function check(): Promise<string[]> {
    const due = await client.query<{ schema: string; table: string }>(`
      SELECT s.schemaname AS schema, s.relname AS table
      FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8
        + current_setting('autovacuum_analyze_scale_factor')::float8 * greatest(c.reltuples, 0)
      ORDER BY 1, 2`);
    const tables = due.rows.map((r) => `${quoteIdentifier(r.schema)}.${quoteIdentifier(r.table)}`);
    if (tables.length > 0) await client.exec(`ANALYZE ${tables.join(', ')}`);
    return tables;
  }

  const runOnce = (): Promise<string[]> => {
    // One check at a time: a slow ANALYZE must not pile up behind the timer.
    running ??= check().finally(() => {
      running = undefined;
    });
    return running;
  };

  const timer = setInterval(() => void runOnce().catch(() => {}), options.intervalMs ?? DEFAULT_AUTO_ANALYZE_INTERVAL_MS);
  timer.unref();

  return {
    runOnce,
    async stop() {
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
