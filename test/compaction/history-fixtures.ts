import type { ChatMessage } from '../../src/llm/messages.js';
import type { HistoryTurn } from '../../src/compaction/conversation-turns.js';
import { buildRuleBasedCheckpoint } from '../../src/compaction/rule-based-checkpoint.js';
import type { TurnCheckpoint } from '../../src/compaction/turn-checkpoint.js';

export const FACT = 'remember that my locker code is 4512';

/** Turn `n`: a question, one tool call with a bulky result, an answer. Turn 3 states FACT. */
export function turnMessages(n: number, resultChars = 800): ChatMessage[] {
  const question = n === 3 ? `Please ${FACT}.` : `Question number ${n}: what do my notes say about topic ${n}?`;
  return [
    { role: 'user', content: question },
    { role: 'assistant', content: null, toolCalls: [{ id: `call_${n}`, name: 'search_memories', arguments: JSON.stringify({ query: `topic ${n}` }) }] },
    {
      role: 'tool',
      toolCallId: `call_${n}`,
      content: `Result for topic ${n}: ${'lorem ipsum dolor sit amet '.repeat(Math.ceil(resultChars / 27))}`.slice(0, resultChars),
    },
    { role: 'assistant', content: `Your notes on topic ${n} say it is about item ${n * 7}.`, toolCalls: [] },
  ];
}

export function historyOf(turnCount: number, resultChars = 800): HistoryTurn[] {
  const turns: HistoryTurn[] = [];
  let seq = 1;
  for (let n = 1; n <= turnCount; n++) {
    const messages = turnMessages(n, resultChars);
    turns.push({ turn: n, firstSeq: seq, lastSeq: seq + messages.length - 1, messages });
    seq += messages.length;
  }
  return turns;
}

export function ruleCheckpoints(turns: readonly HistoryTurn[]): Map<number, TurnCheckpoint> {
  return new Map(turns.map((t) => [t.turn, buildRuleBasedCheckpoint(t)]));
}

export const SYSTEM: ChatMessage = { role: 'system', content: 'You are a helpful assistant. Answer from the sources.' };
export const LIVE: ChatMessage[] = [{ role: 'user', content: 'And what is my locker code?' }];
