import { AbortedError, type LlmError, RateLimitError, TransientError, classifyError } from './llm-errors.js';

export interface RetryOptions {
  /** Total attempts including the first. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * A retry-after longer than this is not waited out: the error is thrown at once, because
   * holding a user's turn for minutes is worse than failing clearly.
   */
  maxRetryAfterMs?: number;
  /** Injected for deterministic tests. */
  random?: () => number;
  onRetry?: (info: RetryInfo) => void;
}

/** A failed attempt about to be retried: which one it was, how long the wait before the next is, and why. */
export interface RetryInfo {
  attempt: number;
  delayMs: number;
  error: LlmError;
}

export const DEFAULT_RETRY: RetryOptions = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 20_000, maxRetryAfterMs: 60_000 };

/** Full jitter (uniform in [0, cap]) so many clients failing together do not retry in lockstep. */
export function backoffDelayMs(attempt: number, options: RetryOptions): number {
  const cap = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor((options.random ?? Math.random)() * cap);
}

export function isRetryable(error: LlmError): boolean {
  return error instanceof RateLimitError || error instanceof TransientError;
}

/**
 * Runs `fn` until it succeeds, fails with a non-retryable error, or attempts run out. Errors are
 * classified, so callers always see an `LlmError` with `attempts` set. `canRetry` lets a caller veto
 * retries after side effects (e.g. stream deltas already shown to the user).
 */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  options: RetryOptions,
  signal?: AbortSignal,
  canRetry: (error: LlmError) => boolean = () => true,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw withAttempts(new AbortedError('LLM request aborted', { cause: signal.reason }), attempt - 1);
    try {
      return await fn(attempt);
    } catch (raw) {
      const error = signal?.aborted ? new AbortedError('LLM request aborted', { cause: raw }) : classifyError(raw);
      withAttempts(error, attempt);
      if (!isRetryable(error) || attempt >= options.maxAttempts || !canRetry(error)) {
        if (isRetryable(error) && attempt >= options.maxAttempts && attempt > 1) {
          error.message = `${error.message} (gave up after ${attempt} attempts)`;
        }
        throw error;
      }
      let delayMs = backoffDelayMs(attempt, options);
      if (error instanceof RateLimitError && error.retryAfterMs !== undefined) {
        if (error.retryAfterMs > (options.maxRetryAfterMs ?? Number.POSITIVE_INFINITY)) throw error;
        delayMs = Math.max(delayMs, error.retryAfterMs);
      }
      options.onRetry?.({ attempt, delayMs, error });
      await abortableSleep(delayMs, signal);
    }
  }
}

function withAttempts<E extends LlmError>(error: E, attempts: number): E {
  error.attempts = attempts;
  return error;
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError('LLM request aborted', { cause: signal.reason }));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError('LLM request aborted', { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
