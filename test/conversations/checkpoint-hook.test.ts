import { describe, expect, it } from 'vitest';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/compaction/compaction-config.js';
import { KEEP_RECENT_TURNS, extendSummaryAhead, mayExtendSummaryAfter } from '../../src/compaction/summary-extension.js';
import { createCheckpointHook } from '../../src/conversations/checkpoint-hook.js';
import type { ConversationStore } from '../../src/conversations/conversation-types.js';
import type { LlmProvider } from '../../src/llm/llm-provider.js';
import { historyOf } from '../compaction/history-fixtures.js';

// Turns far past the window's history share, so that only the turns kept recent hold an extension back.
const SETTINGS = { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: 2_000 };
const BULKY = 4_000;

describe('the checkpoint hook', () => {
  it('does not read a conversation back after its first turns, which an extension never absorbs', async () => {
    const loaded: string[] = [];
    const checkpoints: number[] = [];
    const store = {
      async saveCheckpoint(_id: string, checkpoint: { turn: number }) {
        checkpoints.push(checkpoint.turn);
        return true;
      },
      async load(id: string) {
        loaded.push(id);
        return null;
      },
      async saveSummary() {
        return true;
      },
    } as unknown as ConversationStore;
    // A model that is down: the checkpoint falls back to the rules, and the hook goes on.
    const down = () => Promise.reject(new Error('model down'));
    const llm: LlmProvider = { model: 'down', complete: down, stream: down };
    const hook = createCheckpointHook({ compaction: SETTINGS, summaryTimeoutMs: 1_000, onFallback: () => {} });
    for (const turn of historyOf(KEEP_RECENT_TURNS + 1, BULKY)) {
      await hook.run({ tenantId: 't', store, conversationId: `c${turn.turn}`, agentId: 'a', userId: null, llm, turn, signal: new AbortController().signal });
    }
    expect(checkpoints).toEqual([1, 2, 3]);
    expect(loaded).toEqual([`c${KEEP_RECENT_TURNS + 1}`]);
  });

  it('skips only what the extension would leave as it is, however long the turns', async () => {
    for (let turns = 1; turns <= KEEP_RECENT_TURNS + 2; turns++) {
      const update = await extendSummaryAhead({
        history: historyOf(turns, BULKY),
        checkpoints: new Map(),
        summary: undefined,
        settings: SETTINGS,
        fixedTokens: 500,
      });
      expect({ turns, extended: update !== undefined }).toEqual({ turns, extended: mayExtendSummaryAfter(turns) });
    }
  });
});
