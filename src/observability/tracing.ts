import { context, isSpanContextValid, trace } from '@opentelemetry/api';

/**
 * memrag's tracing vocabulary: the span helper and the attribute names its spans carry. Spans go
 * through `@opentelemetry/api` alone, a no-op until otel-setup.ts registers a provider (only when
 * an OTLP endpoint is configured). docs/operations.md, "OpenTelemetry", lists the spans.
 */
export { withSpan, failSpan, recordFailure, tracer } from '../util/spans.js';
export * from '../llm/gen-ai-attributes.js';

// HTTP semantic conventions (stable).
export const HTTP_REQUEST_METHOD = 'http.request.method';
export const HTTP_ROUTE = 'http.route';
export const HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';
export const URL_PATH = 'url.path';
export const URL_SCHEME = 'url.scheme';
export const USER_AGENT_ORIGINAL = 'user_agent.original';

// memrag's own.
export const MEMRAG_TENANT_ID = 'memrag.tenant_id';
/** The corpus searched (`memories`, `passages`, `turns`). */
export const MEMRAG_RETRIEVAL_CORPUS = 'memrag.retrieval.corpus';
/** `hybrid`, `vector` or `text`. */
export const MEMRAG_RETRIEVAL_MODE = 'memrag.retrieval.mode';
export const MEMRAG_RETRIEVAL_TOP_K = 'memrag.retrieval.top_k';
export const MEMRAG_RETRIEVAL_CANDIDATE_K = 'memrag.retrieval.candidate_k';
/** Rows the vector side found (after the minimum score). */
export const MEMRAG_RETRIEVAL_VECTOR_ROWS = 'memrag.retrieval.vector.rows';
/** Units BM25 scored. */
export const MEMRAG_RETRIEVAL_TEXT_ROWS = 'memrag.retrieval.text.rows';
/** Units after fusing both sides. */
export const MEMRAG_RETRIEVAL_FUSED_ROWS = 'memrag.retrieval.fused.rows';
export const MEMRAG_HOOK_NAME = 'memrag.hook.name';
export const MEMRAG_CONVERSATION_ID = 'memrag.conversation.id';
export const MEMRAG_TURN = 'memrag.turn';
export const MEMRAG_JOB_ID = 'memrag.job.id';
export const MEMRAG_JOB_KIND = 'memrag.job.kind';
export const MEMRAG_JOB_ATTEMPT = 'memrag.job.attempt';
/** `succeeded`, `retried`, `failed` or `lost` (the job-duration metric's outcomes). */
export const MEMRAG_JOB_OUTCOME = 'memrag.job.outcome';

/**
 * The trace id of the active span, when there is one with a valid context (a request served
 * while tracing is on); undefined otherwise, tracing off included.
 */
export function activeTraceId(): string | undefined {
  const span = trace.getSpan(context.active());
  if (!span) return undefined;
  const spanContext = span.spanContext();
  return isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}
