import type { Schemas } from '../../client/memrag-client.js';
import type { ChatTurn, TurnImage } from './chat-turn-state.js';

/** The images a stored message names in `metadata.images`: an attachment by its id, an https image by its URL. */
export function storedImages(metadata: Record<string, unknown> | null | undefined): TurnImage[] {
  const refs = metadata?.images;
  if (!Array.isArray(refs)) return [];
  return refs.flatMap((ref): TurnImage[] => {
    const r = (typeof ref === 'object' && ref !== null ? ref : {}) as Record<string, unknown>;
    if (typeof r.attachmentId === 'string') return [{ kind: 'attachment', attachmentId: r.attachmentId }];
    return typeof r.url === 'string' ? [{ kind: 'link', url: r.url }] : [];
  });
}

/**
 * A stored conversation's messages as turns: the user's question, the last assistant text of the
 * turn as the answer, and its tool calls. Stored messages carry no citations, so their `[n]` stay text.
 */
export function turnsOf(conversationId: string, messages: readonly Schemas['ConversationMessage'][]): ChatTurn[] {
  const turns = new Map<number, ChatTurn>();
  const asked = new Set<number>();
  for (const message of messages) {
    const turn = turns.get(message.turn) ?? {
      question: '',
      images: [],
      answer: '',
      reasoning: '',
      sources: [],
      citations: [],
      activity: [],
      followUps: [],
      state: 'done',
      conversationId,
      number: message.turn,
    };
    turns.set(message.turn, turn);
    // The turn's first user message is its question; later ones were steering messages, sent while it ran.
    if (message.role === 'user' && !asked.has(message.turn)) {
      asked.add(message.turn);
      turn.question = message.content;
      turn.images = storedImages(message.metadata);
    } else if (message.role === 'user') turn.activity.push({ kind: 'steer', message: message.content });
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
