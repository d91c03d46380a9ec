import { quoteIdentifier } from './sql-identifier.js';

/** What runs the checks: a PGlite client or a pg pool (both take SQL text and answer `{ rows }`). */
export interface SqlRunner {
  query<T>(text: string): Promise<{ rows: T[] }>;
}

export interface TableStatisticsOptions {
  /** How often the tables are checked without being asked. Default 5 s. */
  intervalMs?: number;
}

export interface TableStatistics {
  /** One check now: vacuums and analyzes the tables past their threshold and returns their names. */
  runOnce(): Promise<string[]>;
  /**
   * For a writer that just grew tables in bulk (a batch save, an import, an ingestion): the check,
   * at once, so that the next query is planned on statistics of the tables as they are now.
   * Joins a check that starts after the call; never fails (statistics are an optimisation).
   */
  afterBulkWrite(): Promise<void>;
  /** Stops the timer and waits for a check in progress, so the database can be closed. */
  stop(): Promise<void>;
}

/** `TableStatistics.afterBulkWrite`, as the stores that write in bulk take it. */
export type AfterBulkWrite = () => Promise<void>;

export const DEFAULT_TABLE_STATISTICS_INTERVAL_MS = 5_000;

// A table's own setting (migration 0011 sets them for the hot tables), else the server's.
const setting = (name: string) =>
  `coalesce((SELECT option_value::float8 FROM pg_options_to_table(c.reloptions) WHERE option_name = '${name}'), current_setting('${name}')::float8)`;

/**
 * Tables due an ANALYZE: those whose writes since the last one pass autovacuum's threshold (50
 * rows plus 10% of the table, or the table's own settings), and those whose files grew past the
 * same share (plus a page) since then, or that were never analyzed and hold data. The write
 * counters reach the statistics views only when each connection flushes them, up to seconds later
 * on a server; a file's size is current the moment a writer commits.
 */
const DUE_TABLES = `
  SELECT n.nspname AS schema, c.relname AS table
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
  CROSS JOIN LATERAL (SELECT pg_relation_size(c.oid) / current_setting('block_size')::float8 AS pages) f
  WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
    AND (
      coalesce(s.n_mod_since_analyze, 0) > ${setting('autovacuum_analyze_threshold')} + ${setting('autovacuum_analyze_scale_factor')} * greatest(c.reltuples, 0)
      OR (c.reltuples < 0 AND f.pages > 0)
      OR f.pages > greatest(c.relpages, 0) * (1 + ${setting('autovacuum_analyze_scale_factor')}) + 1
    )
  ORDER BY 1, 2`;

/**
 * Planner statistics that follow the data, on either driver. PGlite has no autovacuum, and a
 * server's comes up to a minute late with a threshold that grows with the table: a store used
 * right after a bulk load would otherwise be planned as if its tables were empty (nested loops
 * that are quadratic at a few thousand rows, sequential scans where an index answers in a
 * millisecond). A timer checks every `intervalMs`; bulk writers ask for a check at once.
 *
 * Stale statistics cost more than bad estimates. Cached plans are replanned only when their tables'
 * statistics change, and foreign-key checks run cached plans: the check on `postings.chunk_id`,
 * planned while `chunks` was empty, kept its sequential scan as `chunks` grew, until a posting cost
 * 0.2 ms to insert at a few thousand chunks and ingestion slowed by the size of the corpus.
 */
export function startTableStatistics(runner: SqlRunner, options: TableStatisticsOptions = {}): TableStatistics {
  let running: Promise<string[]> | undefined;
  let queued: Promise<string[]> | undefined;

  async function check(): Promise<string[]> {
    const due = await runner.query<{ schema: string; table: string }>(DUE_TABLES);
    const tables = due.rows.map((r) => `${quoteIdentifier(r.schema)}.${quoteIdentifier(r.table)}`);
    // VACUUM too: rows a bulk write inserted are not yet marked all-visible, so an index-only scan
    // of their postings reads the heap for each (21k turns re-keyed: a turn search's BM25 statement
    // took 172 ms instead of 9 until the table was vacuumed). SKIP_LOCKED: a table another VACUUM
    // or ANALYZE (autovacuum's, another process's) holds is being done.
    if (tables.length > 0) await runner.query(`VACUUM (ANALYZE, SKIP_LOCKED) ${tables.join(', ')}`);
    return tables;
  }

  const start = (): Promise<string[]> => {
    running = check().finally(() => {
      running = undefined;
    });
    return running;
  };

  // One check at a time, and at most one waiting behind it: a caller that arrives while a check
  // runs may have written after that check read the catalog, so it gets the next one, which every
  // caller arriving meanwhile shares.
  const runOnce = (): Promise<string[]> => {
    if (!running) return start();
    queued ??= running
      .catch(() => [])
      .then(() => {
        queued = undefined;
        return running ?? start();
      });
    return queued;
  };

  const timer = setInterval(() => void runOnce().catch(() => {}), options.intervalMs ?? DEFAULT_TABLE_STATISTICS_INTERVAL_MS);
  timer.unref();

  return {
    runOnce,
    afterBulkWrite: () =>
      runOnce().then(
        () => {},
        () => {},
      ),
    async stop() {
      clearInterval(timer);
      await queued?.catch(() => {});
      await running?.catch(() => {});
    },
  };
}
