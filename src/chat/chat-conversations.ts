import { settingsOf } from '../agents/agent-config.js';
import { ConversationNotFoundError } from '../conversations/conversation-types.js';
import type { RunService } from '../runs/run-service.js';
import type { ChatEvent, TurnReply } from './chat-reply.js';
import type { ChatService, ChatServiceOptions } from './chat-service-types.js';
import { describeLoadedConversation } from './conversation-view.js';
import { estimatedFixedTokens } from './estimated-fixed-tokens.js';
import type { TurnStorage } from './turn-storage.js';

export interface ChatConversationsOptions extends Pick<ChatServiceOptions, 'conversations' | 'agents' | 'agentRuntime' | 'knowledge'> {
  storage: TurnStorage;
  runService: Pick<RunService<ChatEvent, TurnReply>, 'assertNoWaitingRun'>;
}

/** What the chat does with a conversation outside its own turns: checks one may go on, stores a turn run elsewhere, describes it. */
export function createChatConversations(options: ChatConversationsOptions): Pick<ChatService, 'assertCanContinue' | 'recordTurn' | 'describeConversation'> {
  const { conversations, agents, agentRuntime: runtime, storage, runService } = options;
  const settingsFor = async (agentId: string) => {
    const agent = agents ? await agents.get(agentId) : null;
    return agent ? settingsOf(agent) : null;
  };

  return {
    async assertCanContinue(conversationId, agentId, userId) {
      if (conversationId !== undefined && conversations && (await conversations.ownedByOther(conversationId, agentId, userId ?? null))) {
        throw new ConversationNotFoundError(conversationId, agentId);
      }
      await runService.assertNoWaitingRun(conversationId);
    },

    async recordTurn(turn) {
      if (!conversations) throw new Error('This chat stores no conversations');
      const { conversationId, agentId } = turn;
      const settings = await settingsFor(agentId);
      const stored = await storage.begin({
        conversationId,
        agentId,
        userId: turn.userId ?? null,
        settings,
        provider: runtime.llmFor(settings),
        signal: turn.signal,
        emit: () => {},
      });
      const number = await stored!.finish([
        { message: { role: 'user', content: turn.user }, metadata: { recorded: true } },
        { message: { role: 'assistant', content: turn.assistant, toolCalls: [] }, metadata: { recorded: true } },
      ]);
      return { conversationId, turn: number };
    },

    async describeConversation(id, agentId) {
      const loaded = await conversations?.load(id, agentId);
      if (!loaded) return null;
      const settings = await settingsFor(agentId);
      const compaction = storage.compactionOf(settings, runtime.llmFor(settings));
      const lastQuestion = loaded.messages.findLast((m) => m.message.role === 'user')?.message.content ?? '';
      const fixed = estimatedFixedTokens({ settings, compaction, hasKnowledge: options.knowledge !== undefined, lastQuestion });
      return describeLoadedConversation(loaded, compaction, fixed);
    },
  };
}
