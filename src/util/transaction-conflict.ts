/**
 * SQLSTATEs after which running the whole transaction again may succeed: a deadlock, a
 * serialization failure, and a unique violation (a concurrent transaction inserted the same key
 * first; run again, the writer reads it and takes another path).
 */
const RETRYABLE = new Set(['40P01', '40001', '23505']);

/** Whether `err`, or an error it wraps (drivers and the ORM nest them as `cause`), is one a transaction may be retried after. */
export function isTransactionConflict(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && RETRYABLE.has(code)) return true;
  }
  return false;
}
