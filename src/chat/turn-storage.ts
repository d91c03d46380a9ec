import type { AgentSettings } from '../agents/agent-config.js';
import type { CompactionSettings } from '../compaction/compaction-config.js';
import { createLlmSummarizer } from '../compaction/summarizer.js';
import type { LlmProvider } from '../llm/llm-provider.js';
import type { ChatMessage } from '../llm/messages.js';
import { definedOnly } from '../util/defined-only.js';
import type { ChatEvent } from './chat-reply.js';
import type { ChatServiceOptions } from './chat-service-types.js';
import { type ConversationTurn, beginConversationTurn } from './conversation-turn.js';

const SUMMARY_TIMEOUT_MS_DEFAULT = 20_000;
/** The turns whose images a turn sends again (IMAGE_HISTORY_TURNS). */
export const IMAGE_HISTORY_TURNS_DEFAULT = 2;

/** What opening a turn's stored conversation needs to know of the turn. */
export interface StoredTurnRequest {
  conversationId: string;
  agentId: string;
  userId: string | null;
  settings: AgentSettings | null;
  provider: LlmProvider | undefined;
  signal: AbortSignal | undefined;
  emit: (e: ChatEvent) => void;
  sentHistory?: readonly ChatMessage[];
  isNew?: boolean;
}

export interface TurnStorage {
  /** The compaction an agent's turns run with: the model's, overridden by what the agent sets. */
  compactionOf(settings: AgentSettings | null, provider: LlmProvider | undefined): CompactionSettings;
  /** The turn's conversation, loaded (and refused when it is another agent's or user's); undefined when none are stored. */
  begin(turn: StoredTurnRequest): Promise<ConversationTurn | undefined>;
}

export type TurnStorageOptions = Pick<
  ChatServiceOptions,
  | 'tenantId'
  | 'conversations'
  | 'afterTurn'
  | 'agentRuntime'
  | 'memoryExtraction'
  | 'summaryTimeoutMs'
  | 'compactionSettleTimeoutMs'
  | 'onSummaryFallback'
  | 'attachments'
  | 'imageHistoryTurns'
>;

/** Where a chat turn is kept: its conversation, compacted for the model, with the after-turn hooks run on what it stores. */
export function createTurnStorage(options: TurnStorageOptions): TurnStorage {
  const { tenantId, conversations, agentRuntime: runtime } = options;
  // Built once per model, not per turn; a model dropped from the runtime takes its summarizer with it.
  const summarizers = new WeakMap<LlmProvider, ReturnType<typeof createLlmSummarizer>>();
  const summarizerFor = (provider: LlmProvider | undefined) => {
    if (!provider) return undefined;
    let summarizer = summarizers.get(provider);
    if (!summarizer) {
      summarizer = createLlmSummarizer(provider, { timeoutMs: options.summaryTimeoutMs ?? SUMMARY_TIMEOUT_MS_DEFAULT });
      summarizers.set(provider, summarizer);
    }
    return summarizer;
  };
  const compactionOf = (settings: AgentSettings | null, provider: LlmProvider | undefined): CompactionSettings => ({
    ...runtime.compactionFor(provider?.model),
    ...definedOnly(settings?.compaction ?? {}),
  });

  const { attachments } = options;
  const images = attachments ? { historyTurns: options.imageHistoryTurns ?? IMAGE_HISTORY_TURNS_DEFAULT, dataUrls: attachments.dataUrls } : undefined;

  const begin = (turn: StoredTurnRequest): Promise<ConversationTurn | undefined> =>
    conversations
      ? beginConversationTurn({
          store: conversations,
          afterTurn: options.afterTurn?.forConversation({
            tenantId,
            store: conversations,
            conversationId: turn.conversationId,
            agentId: turn.agentId,
            userId: turn.userId,
            llm: turn.provider,
            memoryExtraction: turn.settings?.memoryExtraction ?? options.memoryExtraction,
            compaction: compactionOf(turn.settings, turn.provider),
          }),
          conversationId: turn.conversationId,
          agentId: turn.agentId,
          userId: turn.userId,
          ...(turn.sentHistory ? { sentHistory: turn.sentHistory } : {}),
          ...(turn.isNew ? { isNew: true } : {}),
          settings: compactionOf(turn.settings, turn.provider),
          summarizer: summarizerFor(turn.provider),
          signal: turn.signal,
          settleTimeoutMs: options.compactionSettleTimeoutMs,
          onCompaction: (report) => turn.emit({ type: 'compaction', ...report }),
          onFallback: options.onSummaryFallback,
          ...(images ? { images } : {}),
        })
      : Promise.resolve(undefined);

  return { compactionOf, begin };
}
