import { describe, expect, it } from 'vitest';
import { diversifyByConversation } from '../../src/conversations/conversation-diversity.js';
import { conversationPlaces, withConversationPrior } from '../../src/conversations/conversation-prior.js';

const hit = (conversationId: string, score: number) => ({ conversationId, score, id: `${conversationId}:${score}` });
const order = (hits: ReturnType<typeof hit>[], places: ReadonlyMap<string, number> | undefined, prior: number, kept: number) =>
  withConversationPrior(hits, places, prior, kept)
    .sort((a, b) => b.score - a.score)
    .map((k) => k.hit.id);

describe('withConversationPrior', () => {
  // Turns of three conversations, best first; the conversation ranking puts "b" first.
  const hits = [hit('a', 0.9), hit('c', 0.8), hit('a', 0.7), hit('c', 0.6), hit('b', 0.5), hit('b', 0.4)];
  const places = conversationPlaces([
    { conversationId: 'b', score: 3, turns: [] },
    { conversationId: 'a', score: 2, turns: [] },
    { conversationId: 'c', score: 1, turns: [] },
  ]);

  it('keys by the hit score without a prior or a ranking', () => {
    expect(withConversationPrior(hits, places, 0).map((k) => k.score)).toEqual(hits.map((h) => h.score));
    expect(withConversationPrior(hits, undefined, 4).map((k) => k.score)).toEqual(hits.map((h) => h.score));
  });

  it('lifts the turns of the conversation ranked first past better-placed turns of the others', () => {
    // Its own place still counts: the first turn of "a" stays between the two of "b".
    expect(order(hits, places, 4, 0)).toEqual(['b:0.5', 'a:0.9', 'b:0.4', 'a:0.7', 'c:0.8', 'c:0.6']);
    expect(order(hits, places, 100, 0)).toEqual(['b:0.5', 'b:0.4', 'a:0.9', 'a:0.7', 'c:0.8', 'c:0.6']);
  });

  it('leaves the kept turns ahead, in their places', () => {
    expect(order(hits, places, 4, 2)).toEqual(['a:0.9', 'c:0.8', 'b:0.5', 'b:0.4', 'a:0.7', 'c:0.6']);
    expect(order(hits, places, 4, hits.length)).toEqual(hits.map((h) => h.id));
  });

  it('puts a conversation the ranking lacks after those it holds', () => {
    const some = conversationPlaces([{ conversationId: 'c', score: 1, turns: [] }]);
    expect(order(hits, some, 4, 0)).toEqual(['c:0.8', 'c:0.6', 'a:0.9', 'a:0.7', 'b:0.5', 'b:0.4']);
  });

  it('hands the diversity pick keys it can discount', () => {
    const keyed = withConversationPrior([hit('a', 0.9), hit('a', 0.8), hit('a', 0.7), hit('b', 0.1)], conversationPlaces([]), 4, 0);
    expect(diversifyByConversation(keyed, 0.5, 1).map((k) => k.hit.id)).toEqual(['a:0.9', 'b:0.1', 'a:0.8', 'a:0.7']);
  });
});
