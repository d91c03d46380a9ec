import { QUERY_READ_TIMEOUT } from './drop-timed-out-connections.js';

/**
 * Whether an error says the database cannot be reached right now (down, restarting, unreachable,
 * out of connections, not answering within the statement timeout) rather than that a query was
 * wrong: the first is worth a retry (503), the second is a bug (500). Errors arrive wrapped (Drizzle's "Failed query" keeps the driver's error
 * as `cause`; a failed connect to a host with several addresses is an AggregateError), so the
 * whole chain is searched.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0) {
    const e = queue.shift();
    if (typeof e !== 'object' || e === null || seen.has(e)) continue;
    seen.add(e);
    const { code, message, cause, errors } = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || (code.startsWith('08') && code !== PROTOCOL_VIOLATION) || SERVER_CODES.has(code))) return true;
    if (typeof message === 'string' && DRIVER_MESSAGES.some((m) => message.includes(m))) return true;
    queue.push(cause);
    if (Array.isArray(errors)) queue.push(...errors);
  }
  return false;
}

// Socket errors from node:net while connecting or talking to the server.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

// Class 08 but our fault: a message the server could not take (past 65,535 bind parameters, say).
const PROTOCOL_VIOLATION = '08P01';

// SQLSTATEs of a server going away or refusing connections (class 08, connection exceptions, is matched by prefix).
const SERVER_CODES = new Set([
  '57P01', // admin_shutdown: the server is stopping, or an administrator ended the session
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or in recovery
  '57P05', // idle_session_timeout
  '53300', // too_many_connections
  '57014', // query_canceled: past DATABASE_STATEMENT_TIMEOUT_MS (nothing else here cancels queries)
]);

// Errors that pg, pg-pool and PGlite raise without a code.
const DRIVER_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  QUERY_READ_TIMEOUT, // no answer within the statement timeout (and its grace): a server that hangs
  'is not queryable',
  'Cannot use a pool after calling end on the pool',
  'PGlite is closing',
  'PGlite is closed',
];
