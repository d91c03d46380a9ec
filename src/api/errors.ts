import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** One rejected field: `path` is dotted (`tags.0`, `metadata.source`), empty for the whole input. */
export interface FieldIssue {
  path: string;
  message: string;
}

export type ErrorCode =
  | 'invalid_json'
  | 'validation_error'
  | 'not_found'
  // A resource created under an id its tenant already uses (agents).
  | 'agent_exists'
  | 'workflow_exists'
  // A workflow edge's `outputMatches` ran past its time bound on a step's output (see workflow-edges.ts).
  | 'workflow_edge_timeout'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unprocessable_document'
  | 'unauthorized'
  // A valid key without the scope the route needs (see middleware/require-scope.ts).
  | 'forbidden'
  | 'http_error'
  | 'rate_limited'
  // The server is at its concurrency limit (see middleware/concurrency-limit.ts).
  | 'overloaded'
  | 'request_timeout'
  | 'not_ready'
  | 'database_unavailable'
  | 'internal_error'
  // The chat's model, as the provider failed (see error-mapping.ts).
  | 'llm_rate_limited'
  | 'llm_auth_error'
  | 'llm_unavailable'
  // A feature that needs the LLM, on a server without one.
  | 'llm_not_configured'
  | 'llm_timeout'
  | 'context_overflow'
  | 'content_filtered'
  | 'llm_error'
  | 'client_closed_request'
  // Runs (see src/runs): answers the run is not waiting for, or a run that ended.
  | 'run_not_waiting'
  | 'run_expired'
  | 'tool_call_not_pending'
  // A delegated run (a child or a workflow step) its parent waits on: answered through the parent.
  | 'answer_through_parent'
  | 'run_waiting'
  | 'run_cancelled'
  // Steering and pausing (POST /v1/runs/:id/messages, /pause): a run that ended, waits, or runs on another server.
  | 'run_finished'
  | 'run_not_running'
  | 'run_not_live'
  // A follow-up on a run whose queue is full (FOLLOW_UPS_MAX): sent again once a queued one has started.
  | 'follow_ups_full'
  // Jobs (see src/jobs): a synchronous ingest too large for the request timeout, a job that ended;
  // a retry of a job that has not failed, or whose input was dropped.
  | 'use_async'
  | 'job_ended'
  | 'job_not_failed'
  | 'job_input_gone'
  // Memories: an approval of a memory the firewall did not quarantine.
  | 'memory_not_quarantined'
  // Blocks: a held write whose edit no longer applies to the block as it is now.
  | 'block_write_conflict'
  // The OpenAI-compatible routes: a `model` that names no agent of the tenant.
  | 'model_not_found';

/** An error the client caused (or asked about); error-mapping.ts turns it into the JSON error reply. */
export class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ErrorCode,
    message: string,
    readonly details: FieldIssue[] | null = null,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details: FieldIssue[] | null };
}

export function errorBody(code: ErrorCode, message: string, details: FieldIssue[] | null = null): ErrorBody {
  return { error: { code, message, details } };
}

export function invalidJson(message: string): HttpError {
  return new HttpError(400, 'invalid_json', message);
}

// A body of many thousand unknown fields should not make a message of megabytes.
const MESSAGE_MAX_ISSUES = 10;

/** A 400 whose message names the offending fields, so a client log line alone explains it. */
export function validationError(issues: FieldIssue[], source = 'request'): HttpError {
  const named = issues.slice(0, MESSAGE_MAX_ISSUES).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
  if (issues.length > MESSAGE_MAX_ISSUES) named.push(`and ${issues.length - MESSAGE_MAX_ISSUES} more (see details)`);
  return new HttpError(400, 'validation_error', `Invalid ${source}: ${named.join('; ')}`, issues);
}

export function notFound(message: string): HttpError {
  return new HttpError(404, 'not_found', message);
}

export function payloadTooLarge(maxBytes: number): HttpError {
  return new HttpError(413, 'payload_too_large', `The request body is larger than ${maxBytes} bytes`);
}
