import { describe, expect, it } from 'vitest';
import { rankConversations } from '../../src/conversations/conversation-ranking.js';

const hit = (conversationId: string, score: number) => ({ conversationId, score });

describe('rankConversations', () => {
  it('ranks a conversation several turns match above one a single better turn matches', () => {
    const hits = [hit('one', 1), hit('many', 0.8), hit('many', 0.7), hit('many', 0.6)];
    const ranked = rankConversations(hits, 0.5);
    expect(ranked.map((c) => c.conversationId)).toEqual(['many', 'one']);
    expect(ranked[0]!.score).toBeCloseTo(0.8 + 0.35 + 0.15);
    expect(ranked[0]!.turns.map((t) => t.score)).toEqual([0.8, 0.7, 0.6]);
  });

  it('ranks by the best turn alone at a share of 0, ties in the order of the hits', () => {
    const hits = [hit('a', 0.5), hit('b', 0.9), hit('a', 0.5), hit('c', 0.5)];
    expect(rankConversations(hits, 0).map((c) => [c.conversationId, c.score])).toEqual([
      ['b', 0.9],
      ['a', 0.5],
      ['c', 0.5],
    ]);
  });

  it('sorts each conversation’s turns best first whatever order they came in', () => {
    expect(rankConversations([hit('a', 0.2), hit('a', 0.9)], 0.5)[0]!.turns.map((t) => t.score)).toEqual([0.9, 0.2]);
  });
});
