import {
  AbortedError,
  AuthenticationError,
  ContentFilteredError,
  ContextOverflowError,
  EmptyReplyError,
  LlmError,
  RateLimitError,
  TransientError,
} from '../agent/llm-errors.js';

export type ChatErrorCode =
  | 'llm_rate_limited'
  | 'llm_auth_error'
  | 'llm_unavailable'
  | 'llm_timeout'
  | 'context_overflow'
  | 'content_filtered'
  | 'llm_error'
  | 'client_closed_request';

export interface ChatErrorReply {
  status: 400 | 422 | 429 | 499 | 502 | 503 | 504;
  code: ChatErrorCode;
  message: string;
  /** Whole seconds, for a Retry-After header. */
  retryAfterSeconds?: number;
}

/** When the provider names no wait: long enough not to hammer it, short enough to be worth retrying. */
const DEFAULT_RETRY_AFTER_SECONDS = 5;

/**
 * How an LLM failure reaches the client. Our own retries already ran, so what is left is the
 * provider's final word: status codes say whose problem it is (the client's request, the
 * upstream, or load) rather than echoing the provider's status, which describes our request to it.
 * Undefined for anything that is not an LLM error: those are the app's generic 500.
 */
export function describeChatError(error: unknown): ChatErrorReply | undefined {
  if (!(error instanceof LlmError)) return undefined;
  if (error instanceof RateLimitError) {
    const seconds = error.retryAfterMs === undefined ? DEFAULT_RETRY_AFTER_SECONDS : Math.max(1, Math.ceil(error.retryAfterMs / 1000));
    return { status: 429, code: 'llm_rate_limited', message: 'The LLM provider is rate limiting requests; retry later.', retryAfterSeconds: seconds };
  }
  // A bad key is the operator's problem, not the caller's: 502, and no provider text to the client.
  if (error instanceof AuthenticationError) {
    return { status: 502, code: 'llm_auth_error', message: 'The server could not authenticate with its LLM provider.' };
  }
  if (error instanceof TransientError) {
    return /timed out/i.test(error.message)
      ? { status: 504, code: 'llm_timeout', message: 'The LLM provider did not answer in time.' }
      : { status: 503, code: 'llm_unavailable', message: 'The LLM provider is unavailable; retry later.', retryAfterSeconds: DEFAULT_RETRY_AFTER_SECONDS };
  }
  if (error instanceof ContextOverflowError) {
    return {
      status: 422,
      code: 'context_overflow',
      message: "The message and its sources do not fit the model's context window; send a shorter message or a smaller topK.",
    };
  }
  if (error instanceof ContentFilteredError) {
    return { status: 422, code: 'content_filtered', message: "The LLM provider's content filter refused this request." };
  }
  if (error instanceof AbortedError) {
    return { status: 499, code: 'client_closed_request', message: 'The request was aborted.' };
  }
  if (error instanceof EmptyReplyError) {
    return { status: 502, code: 'llm_error', message: 'The LLM returned empty replies.' };
  }
  return { status: 502, code: 'llm_error', message: 'The LLM provider rejected the request.' };
}
