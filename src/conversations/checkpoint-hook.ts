import { writeTurnCheckpoint } from '../compaction/llm-checkpoint-writer.js';
import { createLlmSummarizer } from '../compaction/summarizer.js';
import type { AfterTurnHook } from './after-turn-hooks.js';

export interface CheckpointHookOptions {
  /** The most tokens one checkpoint request may carry: the model's compaction limit. */
  maxRequestTokens: number;
  /** How long the model may take to write one before the rule-based checkpoint is used. */
  summaryTimeoutMs: number;
  onFallback?: ((error: unknown) => void) | undefined;
}

/**
 * Writes each stored turn's checkpoint after the reply: by the chat's model when there is one
 * (else by the rules), once (the store keeps the first), and for the turns that lack one when the
 * conversation is next continued.
 */
export function createCheckpointHook(options: CheckpointHookOptions): AfterTurnHook {
  return {
    name: 'checkpoint',
    async run({ store, conversationId, turn, llm, signal }) {
      const checkpoint = await writeTurnCheckpoint(turn, {
        summarizer: llm && createLlmSummarizer(llm, { timeoutMs: options.summaryTimeoutMs }),
        maxRequestTokens: options.maxRequestTokens,
        signal,
        onFallback: options.onFallback,
      });
      await store.saveCheckpoint(conversationId, checkpoint);
    },
    missing({ loaded, turns }) {
      const done = new Set(loaded.checkpoints.map((c) => c.turn));
      return turns.filter((t) => !done.has(t.turn));
    },
  };
}
