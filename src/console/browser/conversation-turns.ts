import type { Schemas } from '../../client/memrag-client.js';
import type { ChatTurn } from './chat-turn-state.js';

/**
 * A stored conversation's messages as turns: the user's question, the last assistant text of the
 * turn as the answer, and its tool calls. Stored messages carry no citations, so their `[n]` stay text.
 */
export function turnsOf(conversationId: string, messages: readonly Schemas['ConversationMessage'][]): ChatTurn[] {
  const turns = new Map<number, ChatTurn>();
  for (const message of messages) {
    const turn = turns.get(message.turn) ?? {
      question: '',
      answer: '',
      sources: [],
      citations: [],
      activity: [],
      state: 'done',
      conversationId,
      number: message.turn,
    };
    turns.set(message.turn, turn);
    if (message.role === 'user') turn.question = message.content;
    else if (message.role === 'assistant') {
      if (message.content) turn.answer = message.content;
      for (const call of message.toolCalls) turn.activity.push({ kind: 'tool', id: call.id, name: call.name, arguments: call.arguments });
    } else {
      turn.activity = turn.activity.map((a) =>
        a.kind === 'tool' && a.id === message.toolCallId ? { ...a, result: message.content, isError: message.isError } : a,
      );
    }
  }
  return [...turns.values()];
}
