import { describe, expect, it } from 'vitest';
import { createChatConversations } from '../../src/chat/chat-conversations.js';
import { createTurnStorage } from '../../src/chat/turn-storage.js';
import { ConversationNotFoundError, type ConversationStore } from '../../src/conversations/conversation-types.js';
import { fixedAgentRuntime } from '../../testkit/agent-runtime.js';

function conversationsWith(conversations: ConversationStore | undefined) {
  const checked: (string | undefined)[] = [];
  const agentRuntime = fixedAgentRuntime();
  const access = createChatConversations({
    conversations,
    agentRuntime,
    storage: createTurnStorage({ tenantId: 't', conversations, agentRuntime }),
    runService: { assertNoWaitingRun: async (id) => void checked.push(id) },
  });
  return { access, checked };
}

describe('chat conversations', () => {
  it("refuses another agent's or user's conversation before asking about waiting runs", async () => {
    const asked: unknown[][] = [];
    const store = {
      ownedByOther: async (...args: unknown[]) => {
        asked.push(args);
        return true;
      },
    } as unknown as ConversationStore;
    const { access, checked } = conversationsWith(store);
    await expect(access.assertCanContinue('c1', 'bob', 'u1')).rejects.toBeInstanceOf(ConversationNotFoundError);
    expect(asked).toEqual([['c1', 'bob', 'u1']]);
    expect(checked).toEqual([]);
  });

  it('lets a new conversation (no id) go on once no run waits on it', async () => {
    const { access, checked } = conversationsWith(undefined);
    await access.assertCanContinue(undefined, 'bob');
    expect(checked).toEqual([undefined]);
  });

  it('records no turn and describes no conversation when the chat stores none', async () => {
    const { access } = conversationsWith(undefined);
    await expect(access.recordTurn({ conversationId: 'c', agentId: 'a', user: 'q', assistant: 'a' })).rejects.toThrow('stores no conversations');
    expect(await access.describeConversation('c', 'a')).toBeNull();
  });
});
