import type { AgentHooks } from '../llm/agent-loop.js';
import type { ChatMessage } from '../llm/messages.js';
import { repairToolResults } from '../llm/tool-history.js';
import type { CompactionSettings } from '../compaction/compaction-config.js';
import { type CompactionStrategy, compactPrompt } from '../compaction/compactor.js';
import { type HistoryTurn, groupTurns, numberedMessages } from '../compaction/conversation-turns.js';
import type { StructuralSummary } from '../compaction/structural-summary.js';
import type { Summarizer } from '../compaction/summarizer.js';
import type { TurnCheckpoint } from '../compaction/turn-checkpoint.js';
import type { ConversationAfterTurn } from '../conversations/after-turn-hooks.js';
import { ConversationNotFoundError, type ConversationStore, type NewMessage } from '../conversations/conversation-types.js';
import { FIXED_TOKENS_KEY } from '../conversations/measured-fixed-tokens.js';
import { recordConversationCompaction } from '../observability/metrics.js';
import { type ConversationImages, withRecentImages } from './history-images.js';
import { estimateMessagesTokens } from '../compaction/token-estimate.js';

/** Long enough for a checkpoint and a summary layer by a local model; past it the turn goes on with what is stored. */
export const DEFAULT_SETTLE_TIMEOUT_MS = 2_000;

export interface CompactionReport {
  /** The last (strongest) stage applied. */
  strategy: CompactionStrategy;
  strategies: CompactionStrategy[];
  tokensBefore: number;
  tokensAfter: number;
  limit: number;
  /** Summarising requests this compaction waited on (0 when the stored summary and checkpoints sufficed). */
  summarizerCalls: number;
}

export interface ConversationTurnOptions {
  store: ConversationStore;
  /** The after-turn hooks of this conversation (the checkpoint, ...); none when undefined. */
  afterTurn?: ConversationAfterTurn;
  conversationId: string;
  agentId: string;
  /** The turn's user (null: none); a conversation with another user (or with none) is refused. */
  userId: string | null;
  /**
   * The history as the client sent it, in place of the stored one (whose checkpoints and summary
   * describe other messages, so compaction starts afresh and keeps no summary of these).
   */
  sentHistory?: readonly ChatMessage[];
  /** The id was drawn for this turn: nothing can be stored under it yet, so nothing is read. */
  isNew?: boolean;
  settings: CompactionSettings;
  /** Writes structural summaries; undefined: rule-based. */
  summarizer?: Summarizer;
  signal?: AbortSignal;
  /**
   * How long the turn waits for the previous turn's checkpoint and summary work still running,
   * so that its prompt is built from the same stored state however fast that work was.
   */
  settleTimeoutMs?: number;
  onCompaction?: (report: CompactionReport) => void;
  onFallback?: (error: unknown) => void;
  /** The conversation's images: those of its last turns are sent again. */
  images?: ConversationImages;
}

/** One turn of a stored conversation: the history to send, compaction before each LLM call, and the append after. */
export interface ConversationTurn {
  /** Stored messages, oldest first; the agent loop gets them before the new user message. */
  history: ChatMessage[];
  /** The stored turns, oldest first: what recall_turns reopens. */
  turns: readonly HistoryTurn[];
  /**
   * The number this turn will most likely be stored under (the stored turns plus one), for what
   * must name the turn before it is stored (the memory history's author of a tool's change). A
   * concurrent turn of the same conversation may take it first.
   */
  nextTurn: number;
  /** Compacts every request of the turn; `fixedTokens` is what the tool definitions cost. */
  compactionHook(fixedTokens: number): AgentHooks;
  /**
   * Appends the turn (the user's message and the agent's) in one transaction, then starts its
   * after-turn hooks in the background; resolves to the number the turn was stored under.
   */
  finish(messages: NewMessage[]): Promise<number>;
}

/**
 * Loads the conversation (none yet is an empty history: the first turn creates it). An id owned
 * by another agent, user or tenant is refused before any model runs.
 */
export async function beginConversationTurn(options: ConversationTurnOptions): Promise<ConversationTurn> {
  const { store, conversationId, agentId, userId } = options;
  await options.afterTurn?.settled(options.settleTimeoutMs ?? DEFAULT_SETTLE_TIMEOUT_MS);
  const sent = options.sentHistory;
  // With the client's history, the stored one is not read: only whose conversation it is, and its turns' count.
  const loaded = options.isNew || sent ? null : await store.load(conversationId, agentId);
  const conversation = loaded ? loaded.conversation : sent && !options.isNew ? await store.get(conversationId, agentId) : null;
  // Refused as another agent's would be: the reply does not tell that the id exists.
  if (conversation && conversation.userId !== userId) throw new ConversationNotFoundError(conversationId, agentId);
  if (!conversation && !options.isNew && (await store.ownedByOther(conversationId, agentId))) throw new ConversationNotFoundError(conversationId, agentId);
  const storedMessages = loaded && options.images ? await withRecentImages(conversationId, loaded.messages, options.images) : loaded?.messages;
  const turns: HistoryTurn[] = groupTurns(sent ? numberedMessages(sent) : (storedMessages ?? []));
  const checkpoints = new Map<number, TurnCheckpoint>(sent ? [] : (loaded?.checkpoints ?? []).map((c) => [c.turn, c]));
  let summary: StructuralSummary | undefined = sent ? undefined : (loaded?.summary ?? undefined);
  const history = turns.flatMap((t) => t.messages);
  const stored = new Set<ChatMessage>(history);
  // The largest request's part besides the history, stored with the question (see FIXED_TOKENS_KEY).
  let fixedMeasured = 0;

  // Turns whose after-turn work was lost (a crash before it was written, an import without it).
  // (A conversation continued with the client's history is not read for it: its turns get their work as each is stored.)
  if (loaded && turns.length > 0) options.afterTurn?.backfill({ loaded, turns });

  const compactionHook = (fixedTokens: number): AgentHooks => ({
    async beforeLlm(request) {
      const systemCount = request.findIndex((m) => m.role !== 'system');
      const system = systemCount === -1 ? request : request.slice(0, systemCount);
      const rest = systemCount === -1 ? [] : request.slice(systemCount);
      // Everything after the last stored message is this turn's: its question, tool calls so far, a nudge.
      let lastStored = -1;
      rest.forEach((m, i) => {
        if (stored.has(m)) lastStored = i;
      });
      const live = rest.slice(lastStored + 1);
      fixedMeasured = Math.max(fixedMeasured, fixedTokens + estimateMessagesTokens([...system, ...live]));
      const result = await compactPrompt({
        system,
        history: turns,
        live,
        checkpoints,
        summary,
        fixedTokens,
        settings: options.settings,
        summarizer: options.summarizer,
        signal: options.signal,
        onFallback: options.onFallback,
      });
      if (result.summaryUpdated && result.summary) {
        summary = result.summary;
        // Stored at once: later requests of this turn and later turns start from it, never recompute it.
        if (!sent) await store.saveSummary(conversationId, result.summary);
      }
      if (result.strategies.length === 0) return;
      // The tokens saved are credited to the strongest stage: the stages' shares are not separable.
      result.strategies.forEach((strategy, i) =>
        recordConversationCompaction(strategy, i === result.strategies.length - 1 ? { before: result.tokensBefore, after: result.tokensAfter } : undefined),
      );
      options.onCompaction?.({
        strategy: result.strategies.at(-1)!,
        strategies: result.strategies,
        tokensBefore: result.tokensBefore,
        tokensAfter: result.tokensAfter,
        limit: result.limit,
        summarizerCalls: result.llmCalls,
      });
      // Compaction keeps call/result pairs whole; this guards a stored history that was not.
      return repairToolResults(result.messages);
    },
  });

  async function finish(messages: NewMessage[]): Promise<number> {
    const [question, ...rest] = messages;
    const measured =
      fixedMeasured > 0 && question ? [{ ...question, metadata: { ...question.metadata, [FIXED_TOKENS_KEY]: fixedMeasured } }, ...rest] : messages;
    // The turn's images are linked to the conversation in the same statement (see appendTurn).
    const appended = await store.appendTurn({ id: conversationId, agentId, userId, messages: measured });
    options.afterTurn?.completed({
      turn: appended.turn,
      firstSeq: appended.firstSeq,
      lastSeq: appended.lastSeq,
      messages: messages.map((m) => m.message),
    });
    return appended.turn;
  }

  return { history, turns, nextTurn: (conversation?.turnCount ?? 0) + 1, compactionHook, finish };
}
