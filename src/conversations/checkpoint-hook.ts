import type { CompactionSettings } from '../compaction/compaction-config.js';
import { groupTurns } from '../compaction/conversation-turns.js';
import { writeTurnCheckpoint } from '../compaction/llm-checkpoint-writer.js';
import { extendSummaryAhead, mayExtendSummaryAfter } from '../compaction/summary-extension.js';
import { createLlmSummarizer } from '../compaction/summarizer.js';
import { compactionLimit } from '../compaction/compaction-config.js';
import type { AfterTurnHook } from './after-turn-hooks.js';
import { measuredFixedTokens } from './measured-fixed-tokens.js';

export interface CheckpointHookOptions {
  /** The deployment's compaction settings, for a turn whose scope names none. */
  compaction: CompactionSettings;
  /** How long the model may take to write one before the rule-based checkpoint is used. */
  summaryTimeoutMs: number;
  onFallback?: (error: unknown) => void;
}

/**
 * Writes each stored turn's checkpoint after the reply: by the chat's model when there is one
 * (else by the rules), once (the store keeps the first), and for the turns that lack one when the
 * conversation is next continued. Then, when the history has grown past its share of the window,
 * extends the conversation's summary ahead of the next turn, so that turn does not wait for it.
 */
export function createCheckpointHook(options: CheckpointHookOptions): AfterTurnHook {
  return {
    name: 'checkpoint',
    shapesPrompt: true,
    async run({ store, conversationId, agentId, turn, llm, signal, compaction }) {
      const settings = compaction ?? options.compaction;
      const summarizer = llm && createLlmSummarizer(llm, { timeoutMs: options.summaryTimeoutMs });
      const checkpoint = await writeTurnCheckpoint(turn, {
        summarizer,
        maxRequestTokens: compactionLimit(settings),
        signal,
        onFallback: options.onFallback,
      });
      await store.saveCheckpoint(conversationId, checkpoint);
      // Without a model the history is never sent anywhere: there is nothing to summarise ahead for.
      // Nor in a conversation's first turns, which an extension never absorbs: a chat's first
      // turn would otherwise read its whole conversation back (five reads) for nothing.
      if (!llm || !mayExtendSummaryAfter(turn.turn)) return;
      const loaded = await store.load(conversationId, agentId);
      // A backfilled turn is not the conversation's latest: the latest turn's own run extends it.
      if (!loaded || loaded.conversation.turnCount !== turn.turn) return;
      const update = await extendSummaryAhead({
        history: groupTurns(loaded.messages),
        checkpoints: new Map(loaded.checkpoints.map((c) => [c.turn, c])),
        summary: loaded.summary ?? undefined,
        settings,
        fixedTokens: measuredFixedTokens(loaded.messages),
        summarizer,
        signal,
        onFallback: options.onFallback,
      });
      if (update) await store.saveSummary(conversationId, update.summary);
    },
    missing({ loaded, turns }) {
      const done = new Set(loaded.checkpoints.map((c) => c.turn));
      return turns.filter((t) => !done.has(t.turn));
    },
  };
}
