import { describe, expect, it } from 'vitest';
import { createBackgroundTasks } from '../../src/background/background-tasks.js';
import type { CompletedTurn } from '../../src/compaction/turn-checkpoint.js';
import { type AfterTurn, type AfterTurnHook, type TurnScope, createAfterTurnHooks } from '../../src/conversations/after-turn-hooks.js';
import type { ConversationStore, LoadedConversation } from '../../src/conversations/conversation-types.js';

// The runner hands the store to the hooks and never calls it itself.
const store = {} as ConversationStore;
const scope: TurnScope = { tenantId: 'acme', store, conversationId: 'c1', agentId: 'alice', userId: null, llm: undefined };

const turnOf = (n: number): CompletedTurn => ({
  turn: n,
  firstSeq: 2 * n - 1,
  lastSeq: 2 * n,
  messages: [
    { role: 'user', content: `question ${n}` },
    { role: 'assistant', content: `answer ${n}`, toolCalls: [] },
  ],
});

/** A conversation whose stored turns are 1..count, with checkpoints for `checkpointed`. */
function storedTurns(count: number): { loaded: LoadedConversation; turns: CompletedTurn[] } {
  const turns = Array.from({ length: count }, (_, i) => turnOf(i + 1));
  const loaded = { conversation: {}, messages: [], checkpoints: [], summary: null } as unknown as LoadedConversation;
  return { loaded, turns };
}

/** A hook that records what it was told, optionally held until `release()`. */
function recordingHook(name: string, options: { missing?: (turns: readonly CompletedTurn[]) => readonly CompletedTurn[] } = {}) {
  const seen: AfterTurn[] = [];
  const gates: Array<() => void> = [];
  let held = false;
  const hook: AfterTurnHook = {
    name,
    async run(turn) {
      seen.push(turn);
      if (held) await new Promise<void>((resolve) => gates.push(resolve));
    },
    ...(options.missing ? { missing: ({ turns }) => options.missing!(turns) } : {}),
  };
  return {
    hook,
    seen,
    hold: () => (held = true),
    release: () => {
      held = false;
      for (const open of gates.splice(0)) open();
    },
  };
}

const failingHook = (name: string): AfterTurnHook => ({
  name,
  run: async () => {
    throw new Error(`${name} broke`);
  },
});

describe('after-turn hooks', () => {
  it('runs every hook on a completed turn with its scope, once per hook and turn', async () => {
    const tasks = createBackgroundTasks();
    const first = recordingHook('first');
    const second = recordingHook('second');
    const hooks = createAfterTurnHooks([first.hook, second.hook], tasks).forConversation(scope);
    first.hold();
    hooks.completed(turnOf(1));
    // Asked again while the first run is going: a turn's work runs once.
    hooks.completed(turnOf(1));
    first.release();
    await tasks.whenIdle();

    for (const { seen } of [first, second]) {
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ tenantId: 'acme', conversationId: 'c1', agentId: 'alice', llm: undefined, turn: turnOf(1) });
      expect(seen[0]!.store).toBe(store);
      expect(seen[0]!.signal).toBeInstanceOf(AbortSignal);
    }
  });

  it('logs a failing hook by its key and still runs the others', async () => {
    const errors: Array<[string, string]> = [];
    const tasks = createBackgroundTasks((key, error) => errors.push([key, (error as Error).message]));
    const before = recordingHook('before');
    const after = recordingHook('after');
    const hooks = createAfterTurnHooks([before.hook, failingHook('broken'), after.hook], tasks).forConversation(scope);
    hooks.completed(turnOf(2));
    await tasks.whenIdle();
    expect(errors).toEqual([['broken:c1:2', 'broken broke']]);
    expect(before.seen.map((t) => t.turn.turn)).toEqual([2]);
    expect(after.seen.map((t) => t.turn.turn)).toEqual([2]);
  });

  it("backfills each hook's missing turns one at a time, skipping a turn whose own run is still going", async () => {
    const tasks = createBackgroundTasks();
    const events: string[] = [];
    const slow: AfterTurnHook = {
      name: 'slow',
      async run({ turn }) {
        events.push(`start ${turn.turn}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        events.push(`end ${turn.turn}`);
      },
      // Turns 2 and 4 are done already.
      missing: ({ turns }) => turns.filter((t) => t.turn !== 2 && t.turn !== 4),
    };
    const plain = recordingHook('plain');
    const hooks = createAfterTurnHooks([slow, plain.hook], tasks).forConversation(scope);
    // Turn 5's own run is under way when the conversation is next continued.
    hooks.completed(turnOf(5));
    hooks.backfill(storedTurns(5));
    await tasks.whenIdle();
    const started = events.filter((e) => e.startsWith('start'));
    expect(started).toEqual(['start 5', 'start 1', 'start 3']);
    expect(events.indexOf('start 3')).toBeGreaterThan(events.indexOf('end 1'));
    // A hook without `missing` has nothing to backfill.
    expect(plain.seen.map((t) => t.turn.turn)).toEqual([5]);
  });

  it('logs a hook whose `missing` throws, and backfills the other hooks', async () => {
    const errors: string[] = [];
    const tasks = createBackgroundTasks((key) => errors.push(key));
    const broken: AfterTurnHook = {
      name: 'broken',
      run: async () => {},
      missing: () => {
        throw new Error('cannot tell');
      },
    };
    const fine = recordingHook('fine', { missing: (turns) => turns });
    const hooks = createAfterTurnHooks([broken, fine.hook], tasks).forConversation(scope);
    expect(() => hooks.backfill(storedTurns(2))).not.toThrow();
    await tasks.whenIdle();
    expect(errors).toEqual(['backfill:broken:c1']);
    expect(fine.seen.map((t) => t.turn.turn)).toEqual([1, 2]);
  });

  it('aborts running hooks at close, waits for them, and starts none afterwards', async () => {
    const errors: string[] = [];
    const tasks = createBackgroundTasks((key) => errors.push(key));
    const settled: string[] = [];
    const waiting: AfterTurnHook = {
      name: 'waiting',
      run: ({ signal }) =>
        new Promise<void>((_, reject) =>
          signal.addEventListener('abort', () => {
            // Settles a moment after the abort: close must wait for it.
            setTimeout(() => {
              settled.push('waiting');
              reject(signal.reason as Error);
            }, 20);
          }),
        ),
    };
    const backfilling: AfterTurnHook = {
      name: 'backfilling',
      async run({ turn, signal }) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        settled.push(`backfill ${turn.turn}${signal.aborted ? ' (aborted)' : ''}`);
      },
      missing: ({ turns }) => turns,
    };
    const hooks = createAfterTurnHooks([waiting, backfilling], tasks).forConversation(scope);
    hooks.backfill(storedTurns(3));
    hooks.completed(turnOf(4));
    await tasks.close();
    // The abort stopped the backfill after the turn in flight; failures caused by the abort are not errors.
    expect(settled).toContain('waiting');
    expect(settled.filter((s) => s.startsWith('backfill 1'))).toHaveLength(1);
    expect(settled).not.toContain('backfill 2');
    expect(errors).toEqual([]);

    const late = recordingHook('late');
    createAfterTurnHooks([late.hook], tasks).forConversation(scope).completed(turnOf(5));
    await tasks.whenIdle();
    expect(late.seen).toEqual([]);
  });
});
