import type { LlmProvider } from '../llm/llm-provider.js';
import type { BackgroundTasks } from '../background/background-tasks.js';
import type { CompactionSettings } from '../compaction/compaction-config.js';
import type { CompletedTurn } from '../compaction/turn-checkpoint.js';
import type { ConversationStore, LoadedConversation } from './conversation-types.js';
import { MEMRAG_CONVERSATION_ID, MEMRAG_HOOK_NAME, MEMRAG_TENANT_ID, MEMRAG_TURN, withSpan } from '../observability/tracing.js';

/** The conversation a turn belongs to, and what its hooks may use. */
export interface TurnScope {
  tenantId: string;
  /** The tenant's conversations: a hook reads and writes nothing of another tenant's. */
  store: ConversationStore;
  conversationId: string;
  agentId: string;
  /** The user the conversation is with; null when none was named. */
  userId: string | null;
  /** The chat's model; undefined when none is configured. */
  llm: LlmProvider | undefined;
  /** Whether the turn's facts are extracted into memories (the agent's setting, else the deployment's); undefined: yes. */
  memoryExtraction?: boolean;
  /** The compaction settings of the conversation's model (the agent's, else the deployment's). */
  compaction?: CompactionSettings;
}

/** What a hook is told about one completed turn. */
export interface AfterTurn extends TurnScope {
  /** The turn as stored: its number, sequence numbers and messages (the user's first). */
  turn: CompletedTurn;
  /** Fires at shutdown: the hook stops, and what it has not written is written on a later turn's backfill. */
  signal: AbortSignal;
}

/** A stored conversation as loaded at the start of a turn. */
export interface StoredTurns {
  loaded: LoadedConversation;
  /** Its turns so far, oldest first. */
  turns: readonly CompletedTurn[];
}

/**
 * Work done on a stored turn after the reply has gone out (the checkpoint, for one). Hooks run
 * independently, each as its own background task: one failing is logged and stops none of the others.
 */
export interface AfterTurnHook {
  /** Names the hook's tasks (`<name>:<conversation>:<turn>`), and so its failures in the log. */
  readonly name: string;
  /**
   * The next turn's prompt is built from what this hook writes (checkpoints, the summary): the
   * next turn of the conversation waits for it, up to a bound, so that the prompt it sends does
   * not depend on how fast the hook ran.
   */
  readonly shapesPrompt?: boolean;
  run(turn: AfterTurn): Promise<void>;
  /**
   * The turns that still lack this hook's work (a crash before it ran, an imported conversation).
   * They are run one at a time in the background when the conversation is next continued, so a
   * long imported conversation does not fire hundreds of requests at once.
   */
  missing?(conversation: StoredTurns): readonly CompletedTurn[];
}

/** The hooks of one conversation's turn. */
export interface ConversationAfterTurn {
  /** Starts every hook on the turn just stored, once per hook and turn. */
  completed(turn: CompletedTurn): void;
  /** Starts, per hook, the turns of the loaded conversation it has not done yet. */
  backfill(conversation: StoredTurns): void;
  /** Waits up to `timeoutMs` for the running work of the hooks that shape the next prompt; false when the time ran out. */
  settled(timeoutMs: number): Promise<boolean>;
}

export interface AfterTurnHooks {
  forConversation(scope: TurnScope): ConversationAfterTurn;
}

/**
 * Runs the registered hooks in `tasks`: keyed (a turn's work runs once even if asked twice),
 * failures reported by the tasks' error handler instead of thrown, and aborted and drained when
 * the tasks close.
 */
export function createAfterTurnHooks(hooks: readonly AfterTurnHook[], tasks: BackgroundTasks): AfterTurnHooks {
  const turnKey = (hook: AfterTurnHook, conversationId: string, turn: number) => `${hook.name}:${conversationId}:${turn}`;
  const shaping = hooks.filter((hook) => hook.shapesPrompt).map((hook) => hook.name);
  // A span per hook and turn (`after_turn <hook>`), in the trace of the request that stored the turn (its span has usually ended by then).
  const runHook = (hook: AfterTurnHook, turn: AfterTurn) =>
    withSpan(
      `after_turn ${hook.name}`,
      { [MEMRAG_HOOK_NAME]: hook.name, [MEMRAG_TENANT_ID]: turn.tenantId, [MEMRAG_CONVERSATION_ID]: turn.conversationId, [MEMRAG_TURN]: turn.turn.turn },
      () => hook.run(turn),
    );

  return {
    forConversation(scope) {
      const { conversationId } = scope;
      return {
        completed(turn) {
          for (const hook of hooks) {
            tasks.run(turnKey(hook, conversationId, turn.turn), (signal) => runHook(hook, { ...scope, turn, signal }));
          }
        },
        backfill(conversation) {
          for (const hook of hooks) {
            if (!hook.missing) continue;
            const missing = hook.missing.bind(hook);
            tasks.run(`backfill:${hook.name}:${conversationId}`, async (signal) => {
              // Before any await: a turn whose own task is still running is not done twice.
              const turns = missing(conversation).filter((t) => !tasks.has(turnKey(hook, conversationId, t.turn)));
              for (const turn of turns) {
                if (signal.aborted) return;
                await runHook(hook, { ...scope, turn, signal });
              }
            });
          }
        },
        settled(timeoutMs) {
          const ours = (key: string) => shaping.some((name) => key.startsWith(`${name}:${conversationId}:`) || key === `backfill:${name}:${conversationId}`);
          return tasks.whenSettled(ours, timeoutMs);
        },
      };
    },
  };
}
