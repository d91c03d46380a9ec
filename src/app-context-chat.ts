import type { AppContext } from './app-context-types.js';
import { type ChatEvent, type ChatService, createChatService } from './chat/chat-service.js';
import { compactionSettingsFor } from './compaction/compaction-config.js';
import { createLlmSummarizer } from './compaction/summarizer.js';
import { createAfterTurnHooks } from './conversations/after-turn-hooks.js';
import { createCheckpointHook } from './conversations/checkpoint-hook.js';
import { createTurnIndexHook } from './conversations/turn-index-hook.js';
import { createChildConversations } from './delegation/child-conversations.js';
import { createDelegation } from './delegation/delegation-service.js';
import { createAgentLlmResolver } from './llm/agent-llm.js';
import { createMemoryExtractionHook } from './memory/extraction/extraction-hook.js';
import { extractionJobHandler, queueExtraction } from './memory/extraction/extraction-job.js';
import { type MemoryExtractor, createMemoryExtractor } from './memory/extraction/memory-extractor.js';
import { instrumentLlmProvider } from './observability/instrumented-llm.js';
import type { DescribeError } from './runs/run-service.js';
import { type TenantScoped, tenantScoped } from './tenancy/tenant-scoped.js';

// The chat's part of the composition root: each tenant's chat with its delegation, working
// memory, attachments and after-turn hooks, and the fact extraction those hooks queue.

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
> &
  Partial<Pick<AppContext, 'attachments' | 'blocks' | 'database'>>;

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
  return tenantScoped((tenantId) => {
    // The chat runs a delegation's child turns, and the delegation is one of the chat's options: handed in late.
    let service: ChatService | undefined;
    const chatOf = () => service!;
    const delegation = createDelegation<ChatEvent>({
      turns: { chat: (request) => chatOf().chat(request), resume: (request) => chatOf().resume(request), cancelRun: (runId) => chatOf().cancelRun(runId) },
      agents: parts.agents.forTenant(tenantId),
      conversations: parts.database ? createChildConversations(parts.database.db, tenantId) : undefined,
      budget: { prices: config.LLM_PRICES, defaultModel: config.LLM_MODEL },
    });
    service = createChatService({
      tenantId,
      delegation,
      memories: parts.memories.forTenant(tenantId),
      knowledge: parts.knowledge?.forTenant(tenantId),
      embedder: parts.embedder,
      prices: config.LLM_PRICES,
      conversations: parts.conversations.forTenant(tenantId),
      attachments: parts.attachments?.forTenant(tenantId),
      blocks: parts.blocks?.forTenant(tenantId),
      imageHistoryTurns: config.IMAGE_HISTORY_TURNS,
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
    });
    return service;
  });
}

/** The extraction jobs' handler: each tenant's extractor, then the facts made keys of the turn they came from. */
export function createExtractionJobHandler(
  parts: Pick<AppContext, 'logger' | 'turnIndexes' | 'conversations'> & { extractors: TenantScoped<MemoryExtractor> },
) {
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
