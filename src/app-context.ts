import { createPgAgentStore } from './agents/pg-agent-store.js';
import { createExtractionJobHandler, createTenantChat, createTenantExtractors } from './app-context-chat.js';
import type { AppContext, AppContextOptions, ClosableReranker } from './app-context-types.js';
import { createPgAuditLog } from './audit/pg-audit-log.js';
import { createApiKeyAuthenticator } from './auth/api-key-authenticator.js';
import { createBackgroundTasks } from './background/background-tasks.js';
import { startPeriodicSweep } from './background/periodic-sweep.js';
import { backfillSteps } from './backfill-steps.js';
import { createPgBlockStore } from './blocks/pg-block-store.js';
import type { ChatEvent } from './chat/chat-service.js';
import { assertCompactionConfig } from './compaction/compaction-config.js';
import { type Config, ConfigError } from './config/config.js';
import { createPgAttachmentStore } from './conversations/attachment-store.js';
import { createPgConversationStore } from './conversations/pg-conversation-store.js';
import { createTurnIndex } from './conversations/turn-index.js';
import { createTenantTurnSearch } from './conversations/turn-search.js';
import { openDatabase } from './db/database.js';
import { ensureVectorSpace, storedEmbedderId } from './db/vector-space.js';
import { createTenantDocumentSearch } from './documents/document-search.js';
import { createDocumentStore } from './documents/document-store.js';
import { coalescingEmbedder } from './embeddings/coalescing-embedder.js';
import type { Embedder } from './embeddings/embedder.js';
import { rememberRecentVectors } from './embeddings/recent-vectors.js';
import { createJobQueue } from './jobs/job-queue.js';
import { queueBackfillIfNeeded } from './jobs/maintenance-jobs.js';
import { llmProviderFromConfig } from './llm/llm-from-config.js';
import { createMemoryFirewall } from './memory/firewall/memory-firewall.js';
import { llmSecondOpinion } from './memory/firewall/second-opinion.js';
import { startExpirySweeper } from './memory/memory-expiry-sweeper.js';
import { createPgMemoryStore } from './memory/pg-memory-store.js';
import { instrumentEmbedder } from './observability/instrumented-embedder.js';
import { instrumentLlmProvider } from './observability/instrumented-llm.js';
import { createLogger } from './observability/logger.js';
import { dbPoolWait, recordMemoryQuarantined, recordSecondOpinion } from './observability/metrics.js';
import { importJobHandler } from './portability/import-job.js';
import { configuredFusionWeights } from './retrieval/fusion-weights.js';
import { crossEncoderFromConfig } from './retrieval/rerank/cross-encoder-from-config.js';
import { createLiveRuns } from './runs/live-runs.js';
import { createPgRunStore } from './runs/pg-run-store.js';
import { sweepRuns } from './runs/run-sweeper.js';
import { tenantScoped } from './tenancy/tenant-scoped.js';
import { createUserErasure } from './users/user-erasure.js';

// The composition root's API: its types (app-context-types.ts) and the chat's wiring
// (app-context-chat.ts), which tests use to build a context with a part swapped.
export type { AppContext, AppContextOptions, ClosableReranker } from './app-context-types.js';
export { type ChatParts, type ExtractionParts, createTenantChat, createTenantExtractors } from './app-context-chat.js';

/**
 * Opens the database (PGlite in DATA_DIR, or the server at DATABASE_URL), binds it to the
 * embedder's vector space and builds the stores. If that fails, the database is closed again
 * and the embedder stays the caller's to close (one it made for the store, it closes).
 */
export async function createAppContext(config: Config, options: AppContextOptions): Promise<AppContext> {
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
      : {
          dataDir: config.DATA_DIR,
          pgliteThread: config.PGLITE_THREAD,
          ...(config.PGLITE_SHARED_BUFFERS && { pgliteSharedBuffers: config.PGLITE_SHARED_BUFFERS }),
        },
  );
  let crossEncoder: ClosableReranker | undefined;
  let made: Embedder | undefined;
  let embedder: ReturnType<typeof wrapEmbedder>;
  const auth = createApiKeyAuthenticator({ db: database.db, envKeys: config.API_KEYS, cacheTtlMs: config.API_KEY_CACHE_MS });
  try {
    if (typeof options.embedder === 'function') made = await options.embedder(await storedEmbedderId(database.db));
    embedder = wrapEmbedder(made ?? (options.embedder as Embedder));
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
    await made?.close().catch(() => {});
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
  const blocks = tenantScoped((tenantId) => createPgBlockStore({ db: database.db, tenantId, screen: firewall }));
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
  const attachments = tenantScoped((tenantId) => createPgAttachmentStore({ db: database.db, tenantId }));
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
    {
      config,
      logger,
      memories,
      knowledge,
      llm,
      conversations,
      attachments,
      turns,
      turnIndexes,
      backgroundTasks,
      runs,
      liveRuns,
      agents,
      embedder,
      extractors,
      jobs,
      blocks,
      database,
    },
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
    attachments,
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
    blocks,
    close,
  };
}

/**
 * Measured by wrapping, so no embedder or store has to know about metrics: the model's own work,
 * under what spares it (shared and remembered vectors). The outermost wrapper is watched by /readyz.
 */
function wrapEmbedder(embedder: Embedder) {
  return rememberRecentVectors(coalescingEmbedder(instrumentEmbedder(embedder)));
}
