import { describe, expect, it } from 'vitest';
import { diversifyByConversation } from '../../src/conversations/conversation-diversity.js';

const hit = (conversationId: string, score: number) => ({ conversationId, score, id: `${conversationId}:${score}` });

describe('diversifyByConversation', () => {
  it("lets another conversation's turn up past a long session's later turns", () => {
    const hits = [hit('a', 1), hit('a', 0.95), hit('a', 0.9), hit('b', 0.85), hit('c', 0.5)];
    expect(diversifyByConversation(hits, 0.8, 1).map((h) => h.id)).toEqual(['a:1', 'b:0.85', 'a:0.95', 'a:0.9', 'c:0.5']);
    // Two free turns: the second keeps its place, the third gives way.
    expect(diversifyByConversation(hits, 0.8, 2).map((h) => h.id)).toEqual(['a:1', 'a:0.95', 'b:0.85', 'a:0.9', 'c:0.5']);
  });

  it('keeps a far better turn of the same conversation ahead', () => {
    const hits = [hit('a', 1), hit('a', 0.9), hit('b', 0.2)];
    expect(diversifyByConversation(hits, 0.8, 1).map((h) => h.id)).toEqual(['a:1', 'a:0.9', 'b:0.2']);
  });

  it('leaves scores as they were, and the order too at a decay of 1', () => {
    const hits = [hit('a', 1), hit('a', 0.95), hit('b', 0.5)];
    expect(
      diversifyByConversation(hits, 0.5)
        .map((h) => h.score)
        .sort(),
    ).toEqual([0.5, 0.95, 1]);
    expect(diversifyByConversation(hits, 1)).toEqual(hits);
  });

  it('discounts scores below zero downwards too', () => {
    const hits = [hit('a', -0.1), hit('a', -0.11), hit('b', -0.12)];
    expect(diversifyByConversation(hits, 0.8, 1).map((h) => h.id)).toEqual(['a:-0.1', 'b:-0.12', 'a:-0.11']);
  });
});
