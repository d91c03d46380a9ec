import type { LlmProvider } from './llm/llm-provider.js';
import type { AgentStore } from './agents/agent-store.js';
import { createPgAgentStore } from './agents/pg-agent-store.js';
import type { KnowledgeRetriever } from './retrieval/knowledge.js';
import { llmProviderFromConfig } from './llm/llm-from-config.js';
import { type Config, ConfigError } from './config/config.js';
import { type Database, openDatabase } from './db/database.js';
import { ensureVectorSpace } from './db/vector-space.js';
import { coalescingEmbedder } from './embeddings/coalescing-embedder.js';
import type { Embedder } from './embeddings/embedder.js';
import { rememberRecentVectors } from './embeddings/recent-vectors.js';
import { type DocumentStore, createDocumentStore } from './documents/document-store.js';
import { type TenantDocumentSearch, createTenantDocumentSearch } from './documents/document-search.js';
import { crossEncoderFromConfig } from './retrieval/rerank/cross-encoder-from-config.js';
import type { Reranker } from './retrieval/rerank/reranker.js';
import type { MemoryStore } from './memory/memory-types.js';
import { configuredFusionWeights } from './retrieval/fusion-weights.js';
import { type BackgroundTasks, createBackgroundTasks } from './background/background-tasks.js';
import { type ChatEvent, type ChatService, createChatService } from './chat/chat-service.js';
import { createAgentLlmResolver } from './llm/agent-llm.js';
import { type LiveRuns, createLiveRuns } from './runs/live-runs.js';
import type { DescribeError } from './runs/run-service.js';
import { createPgRunStore } from './runs/pg-run-store.js';
import type { RunStore } from './runs/run-types.js';
import { assertCompactionConfig, compactionSettingsFor } from './compaction/compaction-config.js';
import { createAfterTurnHooks } from './conversations/after-turn-hooks.js';
import { createCheckpointHook } from './conversations/checkpoint-hook.js';
import type { ConversationStore } from './conversations/conversation-types.js';
import { createPgConversationStore } from './conversations/pg-conversation-store.js';
import { type TurnIndex, createTurnIndex } from './conversations/turn-index.js';
import { createTurnIndexHook } from './conversations/turn-index-hook.js';
import { type TurnSearch, createTenantTurnSearch } from './conversations/turn-search.js';
import { startExpirySweeper } from './memory/memory-expiry-sweeper.js';
import { startPeriodicSweep } from './background/periodic-sweep.js';
import { sweepRuns } from './runs/run-sweeper.js';
import { createMemoryExtractionHook } from './memory/extraction/extraction-hook.js';
import { extractionJobHandler, queueExtraction } from './memory/extraction/extraction-job.js';
import { importJobHandler } from './portability/import-job.js';
import { type MemoryExtractor, createMemoryExtractor } from './memory/extraction/memory-extractor.js';
import { createLlmSummarizer } from './compaction/summarizer.js';
import { queueBackfillIfNeeded } from './jobs/maintenance-jobs.js';
import { backfillSteps } from './backfill-steps.js';
import { createMemoryFirewall } from './memory/firewall/memory-firewall.js';
import { llmSecondOpinion } from './memory/firewall/second-opinion.js';
import { createPgMemoryStore } from './memory/pg-memory-store.js';
import { instrumentEmbedder } from './observability/instrumented-embedder.js';
import { instrumentLlmProvider } from './observability/instrumented-llm.js';
import { type Logger, createLogger } from './observability/logger.js';
import { dbPoolWait, recordMemoryQuarantined, recordSecondOpinion } from './observability/metrics.js';
import { type ApiKeyAuthenticator, createApiKeyAuthenticator } from './auth/api-key-authenticator.js';
import { type TenantScoped, tenantScoped } from './tenancy/tenant-scoped.js';
import { type JobQueue, createJobQueue } from './jobs/job-queue.js';
import type { JobStore } from './jobs/job-store.js';
import type { AuditLog } from './audit/audit-types.js';
import { createPgAuditLog } from './audit/pg-audit-log.js';
import { type UserErasure, createUserErasure } from './users/user-erasure.js';

/** The services the HTTP routes use; built once at start and closed once at shutdown. */
export interface AppContext {
  config: Config;
  /** Structured JSON logs; lines written while serving a request carry its id. */
  logger: Logger;
  database: Database;
  /** The model behind what spares it work (vectors shared and remembered); `closed` once closed, for /readyz. */
  embedder: Embedder & { readonly closed: boolean };
  /** API keys (API_KEYS and the `api_keys` table) and their tenants; see src/auth. */
  auth: ApiKeyAuthenticator;
  /**
   * The stores are reached through a tenant only (`ctx.memories.forTenant(id)`): a route cannot
   * read or write without naming the tenant of its API key.
   */
  memories: TenantScoped<MemoryStore>;
  documents: TenantScoped<DocumentStore>;
  /** Agents: the versioned settings a chat runs with for an `agentId` (`/v1/agents`). */
  agents: TenantScoped<AgentStore>;
  /** Document retrieval: hybrid, vector and BM25 search over a tenant's chunks (`/v1/search`). */
  search: TenantDocumentSearch;
  /** The chat's model; undefined when none is configured, and the chat answers extractively. */
  llm?: LlmProvider;
  /** Document retrieval for the chat: `search`, unless another retriever was given. */
  knowledge?: TenantScoped<KnowledgeRetriever>;
  /** Stored chat conversations, their checkpoints and summaries. */
  conversations: TenantScoped<ConversationStore>;
  /** Past turns of conversations (episodic recall): search (`/v1/turns/search`, the chat's recall)... */
  turns: TenantScoped<TurnSearch>;
  /** ...and indexing (the chat's turn-index hook, conversation imports). */
  turnIndexes: TenantScoped<TurnIndex>;
  /** The chat (`/v1/chat`) and the views of its stored conversations, over the stores above. */
  chat: TenantScoped<ChatService>;
  /** Chat runs: their status, and the state a paused one resumes from. */
  runs: TenantScoped<RunStore>;
  /** Runs in progress in this process: cancelled, and listened to again after a disconnect, through here. */
  liveRuns: LiveRuns<ChatEvent>;
  /** Fact extraction into memories (`/v1/memories/extract`); undefined without an LLM. */
  extractors?: TenantScoped<MemoryExtractor>;
  /** Work done after a reply (the chat's after-turn hooks); drained before the database closes. */
  backgroundTasks: BackgroundTasks;
  /** The `cross-encoder` reranker (RERANKER_MODEL); undefined when none is configured. */
  crossEncoder?: ClosableReranker;
  /** Durable jobs (`/v1/jobs`): asynchronous and batch ingestion, fact extraction; worked on by this process unless WORKERS_IN_PROCESS=false. */
  jobs: TenantScoped<JobStore>;
  /** The queue and this process's workers (`npm run worker` has only these). */
  jobQueue: JobQueue;
  /** What must stay answerable for (user erasures): who did it, to which user, and counts (`/v1/audit`). */
  audit: TenantScoped<AuditLog>;
  /** Erasing a user's data across agents (`DELETE /v1/users/:userId`), recorded in `audit`. */
  userErasure: TenantScoped<UserErasure>;
  /** Closes the database, then the embedder and the cross-encoder (which may run worker threads). */
  close(): Promise<void>;
}

/** A reranker holding a model, and maybe worker threads, until closed. */
export type ClosableReranker = Reranker & { close(): Promise<void> };

export interface AppContextOptions {
  /**
   * Required: building one from the config is the caller's job (`createEmbedder` in main), so
   * tests can pass a small deterministic one. The context owns it once created.
   */
  embedder: Embedder;
  /** Overrides the LLM built from LLM_* config; `null` means none even when configured. */
  llm?: LlmProvider | null;
  knowledge?: TenantScoped<KnowledgeRetriever>;
  /**
   * Overrides the cross-encoder built from RERANKER_* config; `null` means none even when
   * configured. The context owns it once created.
   */
  crossEncoder?: ClosableReranker | null;
  /** Default: JSON lines on stdout at LOG_LEVEL. Tests pass one writing where they can read it. */
  logger?: Logger;
  /**
   * What a failed run records of its error, as the client would be told it: the HTTP edge's error
   * body (main passes it), so that internals stay out. Default: `turn_failed`, no details.
   */
  describeError?: DescribeError;
}

/**
 * Opens the database (PGlite in DATA_DIR, or the server at DATABASE_URL), binds it to the
 * embedder's vector space and builds the stores. If that fails, the database is closed again
 * and the embedder stays the caller's to close.
 */
export async function createAppContext(config: Config, options: AppContextOptions): Promise<AppContext> {
  // Measured by wrapping, so no embedder or store has to know about metrics: the model's own work,
  // under what spares it (shared and remembered vectors). The outermost wrapper is watched by /readyz.
  const embedder = rememberRecentVectors(coalescingEmbedder(instrumentEmbedder(options.embedder)));
  const logger = options.logger ?? createLogger(config.LOG_LEVEL);
  const crossEncoderComing = options.crossEncoder === undefined ? config.RERANKER_MODEL !== undefined : options.crossEncoder !== null;
  if (config.RERANKER_DEFAULT === 'cross-encoder' && !crossEncoderComing) {
    throw new ConfigError(
      ['RERANKER_DEFAULT', 'RERANKER_MODEL'],
      'RERANKER_DEFAULT=cross-encoder needs RERANKER_MODEL (a Hugging Face model id or a local model folder)',
    );
  }
  assertCompactionConfig(config);
  const database = await openDatabase(
    config.DATABASE_URL
      ? {
          url: config.DATABASE_URL,
          poolSize: config.DATABASE_POOL_SIZE,
          connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
          statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
          onPoolWait: (seconds) => dbPoolWait.observe(seconds),
        }
      : { dataDir: config.DATA_DIR, ...(config.PGLITE_SHARED_BUFFERS && { pgliteSharedBuffers: config.PGLITE_SHARED_BUFFERS }) },
  );
  let crossEncoder: ClosableReranker | undefined;
  const auth = createApiKeyAuthenticator({ db: database.db, envKeys: config.API_KEYS, cacheTtlMs: config.API_KEY_CACHE_MS });
  try {
    // Before any read or write: a store made by another embedder must be refused, not mixed.
    await ensureVectorSpace(database.db, embedder);
    // Memories saved before their BM25 index existed, postings of another analyzer (memories,
    // turns), documents chunked before passages: brought up to date by a job (backfillJobHandler),
    // so that the server serves at once on a large store; text search misses them until it ends.
    const backfill = await queueBackfillIfNeeded(database.db, config.JOB_MAX_ATTEMPTS, backfillSteps(embedder));
    if (backfill) logger.info({ jobId: backfill.id }, 'start-up backfill of the BM25 indexes queued as a job');
    // Asked once now, so the server knows at start whether keys are required (main binds by it).
    await auth.isRequired();
    // Loaded (a model, worker threads) once the store is known to be usable.
    crossEncoder = options.crossEncoder === undefined ? await crossEncoderFromConfig(config) : (options.crossEncoder ?? undefined);
  } catch (err) {
    // One the caller passed in stays the caller's, like the embedder.
    if (options.crossEncoder === undefined) await crossEncoder?.close().catch(() => {});
    await database.close().catch(() => {});
    throw err;
  }
  const weights = configuredFusionWeights(embedder.id, { vector: config.FUSION_VECTOR_WEIGHT, text: config.FUSION_TEXT_WEIGHT });
  const afterBulkWrite = database.statistics.afterBulkWrite;
  const configured = options.llm === undefined ? llmProviderFromConfig(config) : (options.llm ?? undefined);
  const llm = configured && instrumentLlmProvider(configured, { prices: config.LLM_PRICES });
  const firewall = createMemoryFirewall({
    mode: config.MEMORY_FIREWALL,
    embedder,
    onQuarantined: recordMemoryQuarantined,
    onSecondOpinion: recordSecondOpinion,
    ...(llm && config.MEMORY_FIREWALL_SECOND_OPINION === 'llm'
      ? {
          secondOpinion: llmSecondOpinion(llm, {
            timeoutMs: config.MEMORY_FIREWALL_SECOND_OPINION_TIMEOUT_MS,
            onNoVerdict: (reason, err) => logger.debug({ err, reason }, "the firewall's second opinion gave no verdict; the screen's stands"),
          }),
        }
      : {}),
  });
  const memories = tenantScoped((tenantId) => createPgMemoryStore({ db: database.db, embedder, weights, tenantId, afterBulkWrite, firewall }));
  const documents = tenantScoped((tenantId) => createDocumentStore({ db: database.db, embedder, tenantId, afterBulkWrite }));
  const agents = tenantScoped((tenantId) => createPgAgentStore({ db: database.db, tenantId }));
  const search = createTenantDocumentSearch({
    db: database.db,
    embedder,
    weights,
    crossEncoderReranker: crossEncoder,
    defaultReranker: config.RERANKER_DEFAULT,
  });
  const knowledge = options.knowledge ?? search;
  const turnIndexes = tenantScoped((tenantId) => createTurnIndex({ db: database.db, embedder, tenantId }));
  // Turns have weights of their own (turn-fusion-weights.ts): FUSION_*_WEIGHT tunes documents and memories.
  const turns = createTenantTurnSearch({ db: database.db, embedder });
  // An import indexes its turns in its own transaction, so they are recalled as soon as it answers.
  const conversations = tenantScoped((tenantId) =>
    createPgConversationStore({ db: database.db, tenantId, turnIndex: turnIndexes.forTenant(tenantId), afterBulkWrite }),
  );
  const runs = tenantScoped((tenantId) => createPgRunStore({ db: database.db, tenantId }));
  const audit = tenantScoped((tenantId) => createPgAuditLog({ db: database.db, tenantId }));
  const userErasure = tenantScoped((tenantId) => createUserErasure({ db: database.db, tenantId, audit: audit.forTenant(tenantId) }));
  const liveRuns = createLiveRuns<ChatEvent>({ graceMs: config.RUN_RECONNECT_GRACE_MS });
  const backgroundTasks = createBackgroundTasks((key, err) => logger.warn({ err, task: key }, 'background task failed'));
  // Built once: the route's extractor and the chat's extraction hook share its summarizer.
  const extractors = createTenantExtractors({ config, logger, memories, llm });
  // Before the chat, whose extraction hook queues jobs into it.
  const jobQueue = createJobQueue({
    config,
    database,
    embedder,
    logger,
    work: config.WORKERS_IN_PROCESS,
    backfillSteps: backfillSteps(embedder),
    handlers: {
      ...(extractors && { extraction: createExtractionJobHandler({ logger, extractors, turnIndexes, conversations }) }),
      import: importJobHandler({ db: database.db, embedder, conversations, documents, afterBulkWrite }),
    },
  });
  const jobs = jobQueue.stores;
  const chat = createTenantChat(
    { config, logger, memories, knowledge, llm, conversations, turns, turnIndexes, backgroundTasks, runs, liveRuns, agents, embedder, extractors, jobs },
    { describeError: options.describeError },
  );
  const sweeper = startExpirySweeper(database.db, config.MEMORY_SWEEP_INTERVAL_MS, (err) => logger.warn({ err }, 'expired memories sweep failed'));
  // No turn runs for an hour (or a paused run's time to live, if longer): one still running past that was lost with its process.
  const runSweeper = startPeriodicSweep(
    () => sweepRuns(database.db, { lostAfterMs: Math.max(config.RUN_TTL_SECONDS * 1000, 3_600_000) }),
    config.MEMORY_SWEEP_INTERVAL_MS,
    (err) => logger.warn({ err }, 'runs sweep failed'),
  );

  let closing: Promise<void> | undefined;
  const close = () =>
    // Idempotent: a second signal during shutdown must not close the pool twice.
    (closing ??= (async () => {
      try {
        // Checkpoint writers still running are aborted, and must finish before their database goes.
        await backgroundTasks.close();
        // Before the database: a job in progress is abandoned to its lease, not cut mid-query.
        await jobQueue.close();
        await sweeper.stop();
        await runSweeper.stop();
        await database.close();
      } finally {
        try {
          await embedder.close();
        } finally {
          await crossEncoder?.close();
        }
      }
    })());

  return {
    config,
    logger,
    database,
    embedder,
    auth,
    memories,
    documents,
    agents,
    search,
    llm,
    knowledge,
    conversations,
    turns,
    turnIndexes,
    extractors,
    chat,
    runs,
    liveRuns,
    backgroundTasks,
    crossEncoder,
    jobs,
    jobQueue,
    audit,
    userErasure,
    close,
  };
}

/** The parts of a context the chat is built from. */
export type ChatParts = Pick<
  AppContext,
  | 'config'
  | 'logger'
  | 'memories'
  | 'knowledge'
  | 'llm'
  | 'conversations'
  | 'turns'
  | 'turnIndexes'
  | 'backgroundTasks'
  | 'runs'
  | 'liveRuns'
  | 'agents'
  | 'embedder'
  | 'extractors'
  | 'jobs'
>;

/**
 * Every tenant's chat over `parts`, with its after-turn hooks; createAppContext builds it once.
 * Exported for a context with a part swapped (tests give the chat another model).
 */
export function createTenantChat(parts: ChatParts, options: { describeError?: DescribeError } = {}): TenantScoped<ChatService> {
  const { config, logger, llm, extractors } = parts;
  const compaction = compactionSettingsFor(config, llm?.model);
  const agentRuntime = {
    llmFor: createAgentLlmResolver(config, llm, (provider) => instrumentLlmProvider(provider, { prices: config.LLM_PRICES })),
    compactionFor: (model: string | undefined) => compactionSettingsFor(config, model),
  };
  const onSummaryFallback = (err: unknown) => logger.warn({ err }, 'summarizer failed: rule-based checkpoint or summary used');
  // Each stored turn's work after the reply, each hook a background task of its own: another hook is one line here.
  // Registered whenever there is a model: an agent may turn extraction on where the deployment has it off.
  const afterTurn = createAfterTurnHooks(
    [
      createCheckpointHook({ compaction, summaryTimeoutMs: config.COMPACTION_SUMMARY_TIMEOUT_MS, onFallback: onSummaryFallback }),
      createTurnIndexHook(parts.turnIndexes),
      ...(extractors ? [createMemoryExtractionHook((tenantId, payload) => queueExtraction(parts.jobs.forTenant(tenantId), payload))] : []),
    ],
    parts.backgroundTasks,
  );
  // A service per tenant over that tenant's stores: recall, tools and the stored conversation all
  // stay inside the tenant. Building one is a few closures.
  return tenantScoped((tenantId) =>
    createChatService({
      tenantId,
      memories: parts.memories.forTenant(tenantId),
      knowledge: parts.knowledge?.forTenant(tenantId),
      embedder: parts.embedder,
      prices: config.LLM_PRICES,
      conversations: parts.conversations.forTenant(tenantId),
      turns: parts.turns.forTenant(tenantId),
      afterTurn,
      summaryTimeoutMs: config.COMPACTION_SUMMARY_TIMEOUT_MS,
      compactionSettleTimeoutMs: config.COMPACTION_SETTLE_TIMEOUT_MS,
      onSummaryFallback,
      agents: parts.agents.forTenant(tenantId),
      agentRuntime,
      runs: parts.runs.forTenant(tenantId),
      liveRuns: parts.liveRuns,
      runTtlSeconds: config.RUN_TTL_SECONDS,
      toolSearchThreshold: config.TOOL_SEARCH_THRESHOLD,
      memoryExtraction: config.MEMORY_EXTRACTION === 'on',
      describeError: options.describeError,
    }),
  );
}

/** The extraction jobs' handler: each tenant's extractor, then the facts made keys of the turn they came from. */
function createExtractionJobHandler(parts: Pick<AppContext, 'logger' | 'turnIndexes' | 'conversations'> & { extractors: TenantScoped<MemoryExtractor> }) {
  return extractionJobHandler({
    extractorFor: (tenantId) => parts.extractors.forTenant(tenantId),
    conversationExists: async (tenantId, conversationId, agentId) => (await parts.conversations.forTenant(tenantId).get(conversationId, agentId)) !== null,
    factKeys: (tenantId, { conversationId, turn }, facts, signal) => parts.turnIndexes.forTenant(tenantId).addFacts(conversationId, turn, facts, signal),
    onFactKeysFailure: (err, source) => parts.logger.warn({ err, ...source }, 'extracted facts not added to their turn'),
  });
}

/** The parts of a context fact extraction is built from. */
export type ExtractionParts = Pick<AppContext, 'config' | 'logger' | 'memories' | 'llm'>;

/** Every tenant's fact extractor over the chat's model; undefined when there is no model. */
export function createTenantExtractors(parts: ExtractionParts): TenantScoped<MemoryExtractor> | undefined {
  const { config, logger, llm } = parts;
  if (!llm) return undefined;
  const summarizer = createLlmSummarizer(llm, { timeoutMs: config.MEMORY_EXTRACTION_TIMEOUT_MS });
  const onFailure = (reason: string, err: unknown, source: { conversationId: string; turn: number } | undefined) =>
    logger.warn({ err, reason, ...source }, 'memory extraction skipped a step');
  return tenantScoped((tenantId) => createMemoryExtractor({ summarizer, memories: parts.memories.forTenant(tenantId), onFailure }));
}
