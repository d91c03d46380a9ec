import { describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../src/agents/agent-config.js';
import { createTurnStorage } from '../../src/chat/turn-storage.js';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/compaction/compaction-config.js';
import type { LlmProvider } from '../../src/llm/llm-provider.js';

const MODEL = { model: 'small' } as LlmProvider;
const SMALL = { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: 4_096 };

function storage() {
  const asked: (string | undefined)[] = [];
  const turnStorage = createTurnStorage({
    tenantId: 't',
    agentRuntime: {
      llmFor: () => MODEL,
      compactionFor: (model) => {
        asked.push(model);
        return model === 'small' ? SMALL : DEFAULT_COMPACTION_SETTINGS;
      },
    },
  });
  return { turnStorage, asked };
}

describe('turn storage', () => {
  it("compacts for the turn's model, with what the agent sets over it and what it leaves unset kept", () => {
    const { turnStorage, asked } = storage();
    const settings = { compaction: { outputReserve: 64, contextWindow: undefined } } as unknown as AgentSettings;
    expect(turnStorage.compactionOf(settings, MODEL)).toEqual({ ...SMALL, outputReserve: 64 });
    expect(turnStorage.compactionOf(null, undefined)).toEqual(DEFAULT_COMPACTION_SETTINGS);
    expect(asked).toEqual(['small', undefined]);
  });

  it('opens no stored conversation when the chat stores none', async () => {
    const { turnStorage } = storage();
    const stored = await turnStorage.begin({
      conversationId: 'c',
      agentId: 'a',
      userId: null,
      settings: null,
      provider: MODEL,
      signal: undefined,
      emit: () => {},
    });
    expect(stored).toBeUndefined();
  });
});
