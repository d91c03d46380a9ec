import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import {
  AbortedError,
  AuthenticationError,
  ContentFilteredError,
  ContextOverflowError,
  EmptyReplyError,
  LlmError,
  RateLimitError,
  TransientError,
} from '../llm/llm-errors.js';
import { UnknownLlmProviderError } from '../llm/agent-llm.js';
import { AgentExistsError } from '../agents/agent-store.js';
import { ConversationNotFoundError } from '../conversations/conversation-types.js';
import { RunCancelledError, RunConflictError, RunInputError, RunNotFoundError } from '../runs/run-types.js';
import { isDatabaseUnavailable } from '../db/database-unavailable.js';
import { DocumentParseError } from '../documents/parsers/document-parse-error.js';
import { InvalidCursorError } from '../retrieval/cursor.js';
import { ValidTimeOrderError } from '../memory/valid-time-order-error.js';
import { RerankerUnavailableError } from '../retrieval/rerank/reranker-unavailable-error.js';
import { EdgeMatchTimeoutError } from '../workflows/workflow-edges.js';
import { type ErrorBody, type ErrorCode, type FieldIssue, HttpError, errorBody, validationError } from './errors.js';

/** How a failure reaches the client: a reply's status and headers, or an SSE `error` event's `status`. */
export interface ErrorReply {
  /** 499 (client closed request) is nginx's, not in hono's status type; nobody reads it anyway. */
  status: ContentfulStatusCode | 499;
  body: ErrorBody;
  /** Whole seconds, for a Retry-After header: the failure is expected to pass. */
  retryAfterSeconds?: number;
}

/** A restart or failover takes seconds: sooner would mostly meet the same outage, later would idle. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/** When the LLM provider names no wait: long enough not to hammer it, short enough to be worth retrying. */
const LLM_RETRY_AFTER_SECONDS = 5;

const INTERNAL_ERROR: ErrorReply = { status: 500, body: errorBody('internal_error', 'Internal server error') };

/** Hono's own errors (and any middleware added later) keep their status, but not their text/plain body. */
const HTTP_EXCEPTION_CODES: Partial<Record<number, ErrorCode>> = { 401: 'unauthorized', 404: 'not_found', 413: 'payload_too_large' };

function reply(
  status: ErrorReply['status'],
  code: ErrorCode,
  message: string,
  extra: { details?: FieldIssue[] | null; retryAfterSeconds?: number } = {},
): ErrorReply {
  return {
    status,
    body: errorBody(code, message, extra.details ?? null),
    ...(extra.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: extra.retryAfterSeconds }),
  };
}

function fromHttpError(err: HttpError): ErrorReply {
  return reply(err.status, err.code, err.message, { details: err.details });
}

/** The reply for an error it knows, undefined for any other. */
type ErrorMapping = (err: unknown) => ErrorReply | undefined;

function on<E extends Error>(type: abstract new (...args: never[]) => E, toReply: (err: E) => ErrorReply | undefined): ErrorMapping {
  return (err) => (err instanceof type ? toReply(err) : undefined);
}

/**
 * Every failure the API reports, first match wins (subclasses before their parents). The LLM's
 * failures come after our own retries, so what is left is the provider's final word: statuses say
 * whose problem it is (the client's request, the upstream, or load) rather than echoing the
 * provider's status, which describes our request to it.
 */
const ERROR_TABLE: ErrorMapping[] = [
  on(HttpError, fromHttpError),
  on(DocumentParseError, (err) =>
    err.code === 'unsupported_format' ? reply(415, 'unsupported_media_type', err.message) : reply(422, 'unprocessable_document', err.message),
  ),
  on(ConversationNotFoundError, (err) => reply(404, 'not_found', err.message)),
  on(RunNotFoundError, (err) => reply(404, 'not_found', err.message)),
  on(RunConflictError, (err) => reply(409, err.code, err.message)),
  on(RunCancelledError, (err) => reply(409, 'run_cancelled', err.message)),
  on(RunInputError, (err) => fromHttpError(validationError([{ path: err.field, message: err.message }], 'body'))),
  // An agent names a provider the deployment no longer has: the server's configuration, not the request.
  on(UnknownLlmProviderError, (err) => reply(502, 'llm_error', err.message)),
  on(AgentExistsError, (err) => reply(409, 'agent_exists', err.message)),
  // The workflow's own regex ran out of time on a step's output: the definition's problem, named.
  on(EdgeMatchTimeoutError, (err) => reply(422, 'workflow_edge_timeout', err.message)),
  on(InvalidCursorError, () => fromHttpError(validationError([{ path: 'cursor', message: 'is not a cursor returned by this API' }], 'query'))),
  on(ValidTimeOrderError, (err) => fromHttpError(validationError([{ path: err.field, message: err.message }], 'body'))),
  // The search route's schema refuses rerankers the server lacks first; this is the same answer.
  on(RerankerUnavailableError, (err) =>
    fromHttpError(validationError([{ path: 'reranker', message: `is not configured on this server (available: ${err.available.join(', ')})` }], 'body')),
  ),
  on(RateLimitError, (err) =>
    reply(429, 'llm_rate_limited', 'The LLM provider is rate limiting requests; retry later.', {
      retryAfterSeconds: err.retryAfterMs === undefined ? LLM_RETRY_AFTER_SECONDS : Math.max(1, Math.ceil(err.retryAfterMs / 1000)),
    }),
  ),
  // A bad key is the operator's problem, not the caller's: 502, and no provider text to the client.
  on(AuthenticationError, () => reply(502, 'llm_auth_error', 'The server could not authenticate with its LLM provider.')),
  on(TransientError, (err) =>
    /timed out/i.test(err.message)
      ? reply(504, 'llm_timeout', 'The LLM provider did not answer in time.')
      : reply(503, 'llm_unavailable', 'The LLM provider is unavailable; retry later.', { retryAfterSeconds: LLM_RETRY_AFTER_SECONDS }),
  ),
  on(ContextOverflowError, () =>
    reply(422, 'context_overflow', "The message and its sources do not fit the model's context window; send a shorter message or a smaller topK."),
  ),
  on(ContentFilteredError, () => reply(422, 'content_filtered', "The LLM provider's content filter refused this request.")),
  on(AbortedError, () => reply(499, 'client_closed_request', 'The request was aborted.')),
  on(EmptyReplyError, () => reply(502, 'llm_error', 'The LLM returned empty replies.')),
  on(LlmError, () => reply(502, 'llm_error', 'The LLM provider rejected the request.')),
  on(HTTPException, (err) =>
    err.status < 500 ? reply(err.status, HTTP_EXCEPTION_CODES[err.status] ?? 'http_error', err.message || `HTTP ${err.status}`) : undefined,
  ),
  // Not the request's fault, and over once the database is back (the pool reconnects by itself).
  (err) =>
    isDatabaseUnavailable(err)
      ? reply(503, 'database_unavailable', 'The database is unavailable; retry later.', { retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS })
      : undefined,
];

/**
 * The reply for any error a route or a chat stream ends with. Anything not in the table is a
 * 500 whose cause stays in the log: a message could carry SQL or internals the client has no use for.
 */
export function errorReplyFor(err: unknown): ErrorReply {
  for (const mapping of ERROR_TABLE) {
    const described = mapping(err);
    if (described) return described;
  }
  return INTERNAL_ERROR;
}

/** A failed run's error as the client is told it: the API's error body, its internals left out. */
export function describeError(error: unknown): { code: string; message: string } {
  const { code, message } = errorReplyFor(error).body.error;
  return { code, message };
}

/**
 * As `errorReplyFor`, for a reply that has not started yet: some middleware (bearer auth) puts its
 * text in an HTTPException's response rather than its message, which only a reply can wait for.
 */
export async function errorReplyForResponse(err: unknown): Promise<ErrorReply> {
  const described = errorReplyFor(err);
  if (!(err instanceof HTTPException) || err.message || described.status >= 500) return described;
  const text = await err.getResponse().text();
  return text ? { ...described, body: errorBody(described.body.error.code, text, described.body.error.details) } : described;
}
