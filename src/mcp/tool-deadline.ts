import { raceDeadline } from '../api/deadline.js';
import { HttpError } from '../api/errors.js';

/**
 * Runs `work` with a signal that aborts at `ms` (or with `signal`), and fails with a
 * `request_timeout` error at the deadline whether or not the work checks the signal. The
 * per-request timeout middleware cannot do this for /mcp: one request may be a `chat` call, which
 * bounds itself (LLM_TIMEOUT_MS per model call, its iteration cap) and may rightly take longer, and
 * which call it is only shows in the JSON-RPC body. `ms` 0 means no deadline, as REQUEST_TIMEOUT_MS.
 */
export async function withDeadline<T>(ms: number, signal: AbortSignal | undefined, work: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  if (ms <= 0) return work(signal);
  const timedOut = () => new HttpError(504, 'request_timeout', `The tool call did not complete within ${ms} ms`);
  return raceDeadline(ms, timedOut, (deadline) => work(signal ? AbortSignal.any([signal, deadline]) : deadline));
}
