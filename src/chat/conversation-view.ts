import { type CompactionSettings, compactionLimit } from '../compaction/compaction-config.js';
import { compactPrompt } from '../compaction/compactor.js';
import { groupTurns } from '../compaction/conversation-turns.js';
import type { ChatMessage } from '../llm/messages.js';
import { estimateMessageTokens, estimateMessagesTokens } from '../compaction/token-estimate.js';
import type { Conversation, ConversationExport, LoadedConversation, StoredCheckpoint, StoredSummary } from '../conversations/conversation-types.js';
import { toExportMessage } from '../conversations/export-message.js';
import { measuredFixedTokens } from '../conversations/measured-fixed-tokens.js';

/** What the next request costs (estimated tokens). */
export interface ConversationTokens {
  /** The whole stored history. */
  history: number;
  /** The history as the next turn would send it, with the stored checkpoints and summary. */
  compacted: number;
  /** What the request carries besides the history: system prompt, tool definitions, the question with its sources. */
  fixed: number;
  fixedMeasured: boolean;
  /** `fixed` plus the compacted history. */
  nextRequest: number;
  /** The tokens past which a request is compacted. */
  limit: number;
  contextWindow: number;
  outputReserve: number;
}

/** A stored conversation as the API shows it. */
export interface ConversationView {
  conversation: Conversation;
  messages: Array<ConversationExport['messages'][number]>;
  checkpoints: StoredCheckpoint[];
  summary: StoredSummary | null;
  tokens: ConversationTokens;
}

/**
 * `estimatedFixed`: what the next request would carry besides the history when no turn of the
 * conversation measured it (a conversation answered without a model, or imported).
 */
export async function describeLoadedConversation(loaded: LoadedConversation, settings: CompactionSettings, estimatedFixed: number): Promise<ConversationView> {
  const { conversation, checkpoints, summary } = loaded;
  return {
    conversation,
    messages: loaded.messages.map(toExportMessage),
    checkpoints,
    summary,
    tokens: await tokenEstimate(loaded, settings, estimatedFixed),
  };
}

/** Estimated without calling the model: where the stored summary does not reach far enough, a rule-based one stands in. */
async function tokenEstimate(loaded: LoadedConversation, settings: CompactionSettings, estimatedFixed: number): Promise<ConversationTokens> {
  const history = groupTurns(loaded.messages);
  const measured = measuredFixedTokens(loaded.messages);
  const fixed = measured ?? estimatedFixed;
  // The question is counted in `fixed`; an empty one marks where the turn in progress begins.
  const question: ChatMessage = { role: 'user', content: '' };
  const next = await compactPrompt({
    system: [],
    history,
    live: [question],
    checkpoints: new Map(loaded.checkpoints.map((cp) => [cp.turn, cp])),
    summary: loaded.summary ?? undefined,
    fixedTokens: fixed - estimateMessageTokens(question),
    settings,
  });
  return {
    history: estimateMessagesTokens(history.flatMap((t) => t.messages)),
    compacted: Math.max(0, next.tokensAfter - fixed),
    fixed,
    fixedMeasured: measured !== undefined,
    nextRequest: next.tokensAfter,
    limit: compactionLimit(settings),
    contextWindow: settings.contextWindow,
    outputReserve: settings.outputReserve,
  };
}
