import { describe, expect, it } from 'vitest';
import { CONVERSATION_FUSION_WEIGHTS, rankConversations } from '../../src/conversations/conversation-ranking.js';

const hit = (conversationId: string, score: number, vector: number | null, text: number | null) => ({
  conversationId,
  score,
  ranks: { vector, text },
});

describe('rankConversations', () => {
  it('fuses the rank of each conversation’s best turn on each side, the vector side counting double', () => {
    // "words" holds the text side's first turn; "topic" the vector side's first and the text side's third.
    const hits = [hit('words', 0.9, 40, 1), hit('topic', 0.8, 1, 3), hit('topic', 0.5, 2, null), hit('words', 0.4, null, 2)];
    const ranked = rankConversations(hits);
    expect(ranked.map((c) => c.conversationId)).toEqual(['topic', 'words']);
    const {
      signals: { vector, text },
      k,
    } = CONVERSATION_FUSION_WEIGHTS;
    expect(ranked[0]!.score).toBeCloseTo(vector / (k! + 1) + text / (k! + 3), 12);
    expect(ranked[1]!.score).toBeCloseTo(vector / (k! + 40) + text / (k! + 1), 12);
  });

  it('ranks by the text side alone when its weight is all there is, best turn first', () => {
    const hits = [hit('a', 1, 1, 2), hit('b', 0.9, 2, 1)];
    expect(rankConversations(hits, { weights: { signals: { vector: 0, text: 1 }, k: 20 } }).map((c) => c.conversationId)).toEqual(['b', 'a']);
    expect(rankConversations(hits, { weights: { signals: { vector: 1, text: 0 }, k: 20 } }).map((c) => c.conversationId)).toEqual(['a', 'b']);
  });

  it('counts a side a conversation has no turn on as nothing (vector and text modes), ties in the order of the hits', () => {
    const hits = [hit('a', 3, null, 2), hit('b', 2, null, 1), hit('c', 1, null, 2)];
    expect(rankConversations(hits).map((c) => c.conversationId)).toEqual(['b', 'a', 'c']);
  });

  it('sorts each conversation’s turns best first whatever order they came in', () => {
    expect(rankConversations([hit('a', 0.2, 1, null), hit('a', 0.9, 2, null)])[0]!.turns.map((t) => t.score)).toEqual([0.9, 0.2]);
  });
});
