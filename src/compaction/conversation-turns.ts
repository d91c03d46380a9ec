import type { ChatMessage } from '../llm/messages.js';

/** A stored message with its place in the conversation. */
export interface HistoryMessage {
  seq: number;
  /** 1-based turn the message belongs to: a user message and the agent's work answering it. */
  turn: number;
  message: ChatMessage;
}

export interface HistoryTurn {
  turn: number;
  firstSeq: number;
  lastSeq: number;
  messages: ChatMessage[];
}

/**
 * Whole turns are the unit compaction replaces and drops: a turn ends with the answer to its
 * question, so no tool call is ever parted from its result by cutting between turns.
 */
export function groupTurns(history: readonly HistoryMessage[]): HistoryTurn[] {
  const turns: HistoryTurn[] = [];
  for (const { seq, turn, message } of history) {
    const last = turns.at(-1);
    if (last && last.turn === turn) {
      last.messages.push(message);
      last.lastSeq = seq;
    } else {
      turns.push({ turn, firstSeq: seq, lastSeq: seq, messages: [message] });
    }
  }
  return turns;
}

/** Messages that were never stored (a client's history), numbered as stored ones would be: a turn begins at each user message. */
export function numberedMessages(messages: readonly ChatMessage[]): HistoryMessage[] {
  let turn = 0;
  return messages.map((message, i) => {
    if (message.role === 'user' || turn === 0) turn += 1;
    return { seq: i + 1, turn, message };
  });
}
