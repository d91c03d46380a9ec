import { type CompactionSettings, compactionLimit } from '../compaction/compaction-config.js';
import { compactPrompt } from '../compaction/compactor.js';
import { groupTurns } from '../compaction/conversation-turns.js';
import { estimateMessagesTokens } from '../compaction/token-estimate.js';
import type { Conversation, ConversationExport, LoadedConversation, StoredCheckpoint, StoredSummary } from '../conversations/conversation-types.js';
import { toExportMessage } from '../conversations/export-message.js';

/** What the stored history costs in a prompt (estimated tokens). */
export interface ConversationTokens {
  /** The whole stored history. */
  history: number;
  /** As the next turn would send it, with the stored checkpoints and summary. */
  compacted: number;
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

export async function describeLoadedConversation(loaded: LoadedConversation, settings: CompactionSettings): Promise<ConversationView> {
  const { conversation, checkpoints, summary } = loaded;
  return {
    conversation,
    messages: loaded.messages.map(toExportMessage),
    checkpoints,
    summary,
    tokens: await tokenEstimate(loaded, settings),
  };
}

/**
 * Estimated without calling the model: where the stored summary does not reach far enough, a
 * rule-based one stands in. The system prompt, tool definitions and the next question come on top.
 */
async function tokenEstimate(loaded: LoadedConversation, settings: CompactionSettings): Promise<ConversationTokens> {
  const history = groupTurns(loaded.messages);
  const compacted = await compactPrompt({
    system: [],
    history,
    live: [],
    checkpoints: new Map(loaded.checkpoints.map((cp) => [cp.turn, cp])),
    summary: loaded.summary ?? undefined,
    settings,
  });
  return {
    history: estimateMessagesTokens(history.flatMap((t) => t.messages)),
    compacted: compacted.tokensAfter,
    limit: compactionLimit(settings),
    contextWindow: settings.contextWindow,
    outputReserve: settings.outputReserve,
  };
}
