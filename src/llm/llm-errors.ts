import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';

/**
 * Provider failures as the agent needs to reason about them: whether to retry, whether to shrink
 * the context, whether to tell the user. Callers should never have to inspect HTTP statuses.
 */
export class LlmError extends Error {
  /** HTTP status when the failure came from a response. */
  readonly status: number | undefined;
  /** How many attempts were made before giving up; set by the retry loop. */
  attempts = 1;

  constructor(message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.status = options.status;
  }
}

/** Bad or missing API key, or no permission for the model: retrying cannot help. */
export class AuthenticationError extends LlmError {}

export class RateLimitError extends LlmError {
  /** What the provider asked us to wait, when it said so. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options: { status?: number; cause?: unknown; retryAfterMs?: number } = {}) {
    super(message, options);
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** 5xx, dropped connections, timeouts: the same request may well succeed later. */
export class TransientError extends LlmError {}

/** The prompt does not fit the model's window; the caller must compact, not retry. */
export class ContextOverflowError extends LlmError {}

/** The provider refused the content; retrying the same content will be refused again. */
export class ContentFilteredError extends LlmError {}

/** Any other 4xx: our request is wrong. */
export class ClientError extends LlmError {}

/** The caller aborted; never retried, never reported as a provider fault. */
export class AbortedError extends LlmError {}

/** The model kept answering with nothing, even after being nudged. */
export class EmptyReplyError extends LlmError {}

const CONTEXT_OVERFLOW_CODES = new Set(['context_length_exceeded', 'string_above_max_length']);
const CONTEXT_OVERFLOW_TEXT = /context length|context window|maximum context|too many tokens|prompt is too long|reduce the length/i;
const CONTENT_FILTER_CODES = new Set(['content_filter', 'content_policy_violation']);
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND', 'UND_ERR_SOCKET']);

export function isAbortLike(e: unknown): boolean {
  return e instanceof APIUserAbortError || (typeof e === 'object' && e !== null && 'name' in e && (e as { name: unknown }).name === 'AbortError');
}

export function classifyError(e: unknown): LlmError {
  if (e instanceof LlmError) return e;
  // Order matters: the timeout and abort errors are subclasses of APIConnectionError / APIError.
  if (e instanceof APIConnectionTimeoutError) return new TransientError('LLM request timed out', { cause: e });
  if (isAbortLike(e)) return new AbortedError('LLM request aborted', { cause: e });
  if (e instanceof APIConnectionError) return new TransientError(`LLM connection failed: ${e.message}`, { cause: e });
  if (e instanceof APIError) return classifyApiError(e);
  if (hasNetworkCode(e)) return new TransientError(`LLM connection failed: ${(e as Error).message}`, { cause: e });
  const message = e instanceof Error ? e.message : String(e);
  return new LlmError(`LLM call failed: ${message}`, { cause: e });
}

function classifyApiError(e: APIError): LlmError {
  const status = e.status;
  const code = e.code ?? undefined;
  const message = e.message;
  const opts = { status, cause: e };
  // Errors sent inside an SSE stream carry no status; the connection was fine, the server was not.
  if (status === undefined) return new TransientError(`LLM stream error: ${message}`, opts);
  if (status === 401 || status === 403) return new AuthenticationError(`LLM authentication failed (${status}): ${message}`, opts);
  if (status === 429) {
    // Quota exhaustion also arrives as 429, but waiting will not refill the account.
    if (code === 'insufficient_quota') return new ClientError(`LLM quota exhausted: ${message}`, opts);
    return new RateLimitError(`LLM rate limited: ${message}`, { ...opts, retryAfterMs: retryAfterMs(e.headers) });
  }
  if (code && CONTEXT_OVERFLOW_CODES.has(code)) return new ContextOverflowError(`LLM context overflow: ${message}`, opts);
  if (code && CONTENT_FILTER_CODES.has(code)) return new ContentFilteredError(`LLM content filtered: ${message}`, opts);
  if (status === 400 || status === 413) {
    if (CONTEXT_OVERFLOW_TEXT.test(message)) return new ContextOverflowError(`LLM context overflow: ${message}`, opts);
  }
  if (status === 408 || status === 409 || status >= 500) return new TransientError(`LLM provider error (${status}): ${message}`, opts);
  return new ClientError(`LLM request rejected (${status}): ${message}`, opts);
}

/** Reads `retry-after-ms` (OpenAI) or `retry-after` (seconds or an HTTP date). */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get('retry-after');
  if (!raw) return undefined;
  const seconds = Number.parseFloat(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function hasNetworkCode(e: unknown): boolean {
  for (let cur: unknown = e, depth = 0; cur && depth < 4; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  }
  return false;
}
