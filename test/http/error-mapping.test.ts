import { AgentExistsError } from '../../src/agents/agent-store.js';
import { HTTPException } from 'hono/http-exception';
import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  AuthenticationError,
  ClientError,
  ContentFilteredError,
  ContextOverflowError,
  EmptyReplyError,
  LlmError,
  RateLimitError,
  TransientError,
} from '../../src/llm/llm-errors.js';
import { ConversationNotFoundError } from '../../src/conversations/conversation-types.js';
import { DocumentParseError } from '../../src/documents/parsers/document-parse-error.js';
import { errorReplyFor, errorReplyForResponse } from '../../src/api/error-mapping.js';
import { notFound, validationError } from '../../src/api/errors.js';
import { InvalidCursorError } from '../../src/retrieval/cursor.js';
import { RerankerUnavailableError } from '../../src/retrieval/rerank/reranker-unavailable-error.js';

/** The table alone; the replies of real routes and streams are in errors.test.ts, chat.test.ts and friends. */
describe('errorReplyFor', () => {
  it.each([
    ['an HttpError keeps its own status, code and details', validationError([{ path: 'tags.0', message: 'too long' }], 'body'), 400, 'validation_error'],
    ['an unsupported file', new DocumentParseError('unsupported_format', 'PNG is not a document'), 415, 'unsupported_media_type'],
    ['a corrupt file', new DocumentParseError('invalid_document', 'broken PDF'), 422, 'unprocessable_document'],
    ['a missing conversation', new ConversationNotFoundError('c1', 'a1'), 404, 'not_found'],
    ['an agent id that is taken', new AgentExistsError('support'), 409, 'agent_exists'],
    ['a forged cursor', new InvalidCursorError(), 400, 'validation_error'],
    ['a reranker the server lacks', new RerankerUnavailableError('cross-encoder', ['none', 'lexical']), 400, 'validation_error'],
    ['a bad LLM key', new AuthenticationError('LLM authentication failed (401): nope'), 502, 'llm_auth_error'],
    ['an LLM timeout', new TransientError('LLM request timed out'), 504, 'llm_timeout'],
    ['a context overflow', new ContextOverflowError('LLM context overflow: too long'), 422, 'context_overflow'],
    ['a content filter', new ContentFilteredError('LLM content filtered'), 422, 'content_filtered'],
    ['an aborted turn', new AbortedError('LLM request aborted'), 499, 'client_closed_request'],
    ['empty replies', new EmptyReplyError('empty'), 502, 'llm_error'],
    ['a rejected LLM request', new ClientError('LLM request rejected (400): bad'), 502, 'llm_error'],
    ['any other LLM failure', new LlmError('LLM call failed: ?'), 502, 'llm_error'],
    ["Hono's 401", new HTTPException(401, { message: 'who are you' }), 401, 'unauthorized'],
    ["Hono's 418", new HTTPException(418, { message: 'teapot' }), 418, 'http_error'],
    ["Hono's 500", new HTTPException(500, { message: 'internal detail' }), 500, 'internal_error'],
    ['anything else', new Error('SELECT * FROM secrets failed'), 500, 'internal_error'],
  ])('%s', (_name, err, status, code) => {
    const reply = errorReplyFor(err);
    expect(reply.status).toBe(status);
    expect(reply.body.error.code).toBe(code);
    expect(reply.retryAfterSeconds).toBeUndefined();
  });

  it('keeps the details of a validation error, and names the cursor and the reranker as fields', () => {
    expect(errorReplyFor(validationError([{ path: 'tags.0', message: 'too long' }], 'body')).body.error.details).toEqual([
      { path: 'tags.0', message: 'too long' },
    ]);
    expect(errorReplyFor(new InvalidCursorError()).body).toEqual({
      error: {
        code: 'validation_error',
        message: 'Invalid query: cursor: is not a cursor returned by this API',
        details: [{ path: 'cursor', message: 'is not a cursor returned by this API' }],
      },
    });
    expect(errorReplyFor(new RerankerUnavailableError('cross-encoder', ['none', 'lexical'])).body.error.details).toEqual([
      { path: 'reranker', message: 'is not configured on this server (available: none, lexical)' },
    ]);
  });

  it('asks to retry after what the LLM provider said, or 5 s, and after 2 s for an unreachable database', () => {
    expect(errorReplyFor(new RateLimitError('LLM rate limited', { retryAfterMs: 1500 }))).toMatchObject({ status: 429, retryAfterSeconds: 2 });
    expect(errorReplyFor(new RateLimitError('LLM rate limited', { retryAfterMs: 10 }))).toMatchObject({ status: 429, retryAfterSeconds: 1 });
    expect(errorReplyFor(new RateLimitError('LLM rate limited'))).toMatchObject({
      status: 429,
      body: { error: { code: 'llm_rate_limited' } },
      retryAfterSeconds: 5,
    });
    expect(errorReplyFor(new TransientError('LLM connection failed: ECONNRESET'))).toMatchObject({
      status: 503,
      body: { error: { code: 'llm_unavailable' } },
      retryAfterSeconds: 5,
    });
    const down = new Error('Failed query', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }) });
    expect(errorReplyFor(down)).toMatchObject({ status: 503, body: { error: { code: 'database_unavailable', details: null } }, retryAfterSeconds: 2 });
  });

  it('says nothing of the cause of a 500, nor of the provider behind an LLM failure', () => {
    expect(errorReplyFor(new Error('SELECT * FROM secrets failed')).body.error.message).toBe('Internal server error');
    expect(errorReplyFor(new AuthenticationError('LLM authentication failed (401): key sk-123 is wrong')).body.error.message).not.toContain('sk-123');
  });

  it('takes the text of an HTTPException from its response when it has no message', async () => {
    const err = new HTTPException(401, { res: new Response('Unauthorized by the gateway', { status: 401 }) });
    expect((await errorReplyForResponse(err)).body.error).toMatchObject({ code: 'unauthorized', message: 'Unauthorized by the gateway' });
    expect((await errorReplyForResponse(new HTTPException(404))).body.error).toMatchObject({ code: 'not_found', message: 'HTTP 404' });
    expect((await errorReplyForResponse(notFound('No such thing'))).body.error).toMatchObject({ code: 'not_found', message: 'No such thing' });
  });
});
