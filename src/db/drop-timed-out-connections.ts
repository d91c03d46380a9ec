import type pg from 'pg';
import { onFailedQuery } from './failed-query-hook.js';

/** What pg fails a query with once its `query_timeout` passes without an answer. */
export const QUERY_READ_TIMEOUT = 'Query read timeout';

/**
 * A query past pg's `query_timeout` fails, but pg goes on waiting for its answer on that
 * connection: the queries sent after it (a transaction's ROLLBACK) queue behind it, and a client
 * released without the error (as drizzle's transactions release theirs) goes back to the pool to
 * hang the next request too, until TCP gives up on a server that stopped answering. Destroying
 * the socket fails what is queued at once, and the pool drops the client (no longer queryable)
 * and opens a fresh one once the database answers again.
 */
export function dropConnectionsWhoseQueryTimesOut(pool: pg.Pool): void {
  onFailedQuery(pool, (client, _query, err) => {
    if (err instanceof Error && err.message === QUERY_READ_TIMEOUT)
      (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  });
}
