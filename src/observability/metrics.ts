import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * One registry for the process, served at `/metrics`. Module-level rather than per app context,
 * so that code with no context at hand (compaction, background work) can record too; several
 * contexts in one process (tests) simply add up.
 */
export const metricsRegistry = new Registry();

// Process CPU, resident memory, heap, event-loop lag, GC: the first things to look at under load.
collectDefaultMetrics({ register: metricsRegistry });

// Requests span sub-millisecond reads to multi-second ingestions and LLM turns.
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const httpRequestDuration = new Histogram({
  name: 'memrag_http_request_duration_seconds',
  help: 'Time to the response headers, by route pattern (not raw path), method and status; a streamed body may last longer',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});

export const httpRequestsInFlight = new Gauge({
  name: 'memrag_http_requests_in_flight',
  help: 'Requests received and not yet answered (to the response headers)',
  registers: [metricsRegistry],
});

export const httpRequestsShed = new Counter({
  name: 'memrag_http_requests_shed_total',
  help: 'Requests answered 503 with Retry-After without being run, the server being at its concurrency limit, by reason (queue_full|queue_timeout)',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

export const admissionWait = new Histogram({
  name: 'memrag_admission_wait_seconds',
  help: 'Time a request waited for admission (a server slot and a slot of its tenant, TENANT_MAX_CONCURRENT) before it ran, by tenant',
  labelNames: ['tenant'] as const,
  buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metricsRegistry],
});

export const dbPoolWait = new Histogram({
  name: 'memrag_db_pool_wait_seconds',
  help: 'Time a query or transaction waited for a pooled PostgreSQL connection (zero while one is idle)',
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

export const llmRequestDuration = new Histogram({
  name: 'memrag_llm_request_duration_seconds',
  help: 'Duration of one LLM call as the agent sees it, retries included, by model, mode (complete|stream) and outcome (ok|error|aborted)',
  labelNames: ['model', 'mode', 'outcome'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120],
  registers: [metricsRegistry],
});

export const llmTimeToFirstToken = new Histogram({
  name: 'memrag_llm_time_to_first_token_seconds',
  help: 'Streaming LLM calls: time from the request to the first text delta, by model',
  labelNames: ['model'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30],
  registers: [metricsRegistry],
});

export const llmTokens = new Counter({
  name: 'memrag_llm_tokens_total',
  help: 'Tokens reported by the LLM provider, by model and type (prompt|completion)',
  labelNames: ['model', 'type'] as const,
  registers: [metricsRegistry],
});

// Counters of their own rather than more types of memrag_llm_tokens_total: they are parts of its
// prompt and completion counts, which a sum over its types would count twice.
export const llmCachedTokens = new Counter({
  name: 'memrag_llm_cached_tokens_total',
  help: "Prompt tokens the LLM provider served from its prompt cache (part of memrag_llm_tokens_total's prompt), by model",
  labelNames: ['model'] as const,
  registers: [metricsRegistry],
});

export const llmReasoningTokens = new Counter({
  name: 'memrag_llm_reasoning_tokens_total',
  help: "Completion tokens the model spent reasoning (part of memrag_llm_tokens_total's completion), by model",
  labelNames: ['model'] as const,
  registers: [metricsRegistry],
});

export const embeddingDuration = new Histogram({
  name: 'memrag_embedding_duration_seconds',
  help: 'Duration of one embed call (a search query, a memory, or a batch of document chunks), by embedder and outcome',
  labelNames: ['embedder', 'outcome'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metricsRegistry],
});

export const embeddedTexts = new Counter({
  name: 'memrag_embedded_texts_total',
  help: 'Texts embedded, by embedder',
  labelNames: ['embedder'] as const,
  registers: [metricsRegistry],
});

const compactions = new Counter({
  name: 'memrag_compactions_total',
  help: 'Conversation-history compactions before an LLM call, by strategy',
  labelNames: ['strategy'] as const,
  registers: [metricsRegistry],
});

const compactionTokensSaved = new Counter({
  name: 'memrag_compaction_tokens_saved_total',
  help: 'Prompt tokens removed by compaction (estimated tokens before minus after), by strategy',
  labelNames: ['strategy'] as const,
  registers: [metricsRegistry],
});

/**
 * For the conversation compaction code: call once each time a strategy is applied to a prompt
 * (`checkpoints`, `structural`, `drop_turns`, `truncate`, …), with the estimated token counts
 * around it when known. Keep `strategy` to a small fixed set: each value is a time series.
 */
export function recordConversationCompaction(strategy: string, tokens?: { before: number; after: number }): void {
  compactions.inc({ strategy });
  if (tokens && tokens.before > tokens.after) compactionTokensSaved.inc({ strategy }, tokens.before - tokens.after);
}

const extractionRuns = new Counter({
  name: 'memrag_memory_extraction_runs_total',
  help: 'Fact extractions run (after a turn or through /v1/memories/extract), by outcome: ok, empty (no facts), failed (the model failed or answered nonsense)',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

const extractionDecisions = new Counter({
  name: 'memrag_memory_extraction_decisions_total',
  help: 'Memory decisions of fact extraction, by event (ADD|UPDATE|INVALIDATE|NONE) and status (applied|skipped)',
  labelNames: ['event', 'status'] as const,
  registers: [metricsRegistry],
});

const extractionFailures = new Counter({
  name: 'memrag_memory_extraction_failures_total',
  help: 'Fact extraction steps or decisions skipped, by reason (llm_error, timeout, malformed_output, unknown_id, unknown_fact, conflicting_decision, invalid_content)',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

export function recordExtractionRun(outcome: 'ok' | 'empty' | 'failed'): void {
  extractionRuns.inc({ outcome });
}

export function recordExtractionDecision(event: string, status: string): void {
  extractionDecisions.inc({ event, status });
}

export function recordExtractionFailure(reason: string): void {
  extractionFailures.inc({ reason });
}

const memoriesQuarantined = new Counter({
  name: 'memrag_memory_quarantined_total',
  help: 'Memory writes the firewall quarantined, by reason (override, standing_order, role_marker, exfiltration, hidden_text, similar_to_injection, second_opinion); a write with several reasons counts under each',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

export function recordMemoryQuarantined(reasons: readonly string[]): void {
  for (const reason of reasons) memoriesQuarantined.inc({ reason });
}

const secondOpinions = new Counter({
  name: 'memrag_memory_second_opinion_total',
  help: "Borderline memory writes put to the LLM, by what was asked (quarantine, release) and its verdict (injection, fact, none: it failed, timed out or answered otherwise, and the screen's verdict stood)",
  labelNames: ['asked', 'verdict'] as const,
  registers: [metricsRegistry],
});

export function recordSecondOpinion(asked: string, verdict: string | undefined): void {
  secondOpinions.inc({ asked, verdict: verdict ?? 'none' });
}
