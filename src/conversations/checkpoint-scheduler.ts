import type { BackgroundTasks } from '../background/background-tasks.js';
import { writeTurnCheckpoint } from '../compaction/llm-checkpoint-writer.js';
import type { Summarizer } from '../compaction/summarizer.js';
import type { CompletedTurn } from '../compaction/turn-checkpoint.js';
import type { ConversationStore } from './conversation-types.js';

export interface CheckpointSchedulerOptions {
  store: ConversationStore;
  tasks: BackgroundTasks;
  /** Without one, checkpoints are rule-based. */
  summarizer: Summarizer | undefined;
  /** The most tokens one checkpoint request may carry. */
  maxRequestTokens: number;
  onFallback?: ((error: unknown) => void) | undefined;
}

/**
 * Writes turn checkpoints after the reply, in the background: each turn's once (the store keeps
 * the first), and the missing ones of a conversation (a crash, an import) one at a time, so a
 * long imported conversation does not fire hundreds of LLM requests at once.
 */
export interface CheckpointScheduler {
  schedule(conversationId: string, turn: CompletedTurn): void;
  backfill(conversationId: string, turns: readonly CompletedTurn[]): void;
}

export function createCheckpointScheduler(options: CheckpointSchedulerOptions): CheckpointScheduler {
  const { store, tasks } = options;
  const key = (conversationId: string, turn: number) => `checkpoint:${conversationId}:${turn}`;
  const write = async (conversationId: string, turn: CompletedTurn, signal: AbortSignal) => {
    const checkpoint = await writeTurnCheckpoint(turn, {
      summarizer: options.summarizer,
      maxRequestTokens: options.maxRequestTokens,
      signal,
      onFallback: options.onFallback,
    });
    await store.saveCheckpoint(conversationId, checkpoint);
  };

  return {
    schedule(conversationId, turn) {
      tasks.run(key(conversationId, turn.turn), (signal) => write(conversationId, turn, signal));
    },
    backfill(conversationId, turns) {
      const missing = turns.filter((t) => !tasks.has(key(conversationId, t.turn)));
      if (missing.length === 0) return;
      tasks.run(`backfill:${conversationId}`, async (signal) => {
        for (const turn of missing) {
          if (signal.aborted) return;
          await write(conversationId, turn, signal);
        }
      });
    },
  };
}
