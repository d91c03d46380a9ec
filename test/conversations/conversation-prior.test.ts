import { describe, expect, it } from 'vitest';
import { diversifyByConversation } from '../../src/conversations/conversation-diversity.js';
import { conversationPlaces, orderByConversations } from '../../src/conversations/conversation-prior.js';

const hit = (conversationId: string, score: number) => ({ conversationId, score, id: `${conversationId}:${score}` });
const ids = (hits: { id: string }[]) => hits.map((h) => h.id);
const ranking = (...ids: string[]) => conversationPlaces(ids.map((conversationId) => ({ conversationId, score: 0, turns: [] })));

describe('orderByConversations', () => {
  // Turns of three conversations, best first; the conversation ranking puts "b" first.
  const hits = [hit('a', 0.9), hit('c', 0.8), hit('a', 0.7), hit('c', 0.6), hit('b', 0.5), hit('b', 0.4)];
  const places = ranking('b', 'a', 'c');

  it('is the diversity pick alone without a prior or a ranking', () => {
    expect(orderByConversations(hits, { places, prior: 0, kept: 0 })).toEqual(diversifyByConversation(hits));
    expect(orderByConversations(hits, { prior: 4, kept: 0 })).toEqual(diversifyByConversation(hits));
  });

  it('lifts the turns of the conversation ranked first past better-placed turns of the others', () => {
    // Its own place still counts: the first turn of "a" stays between the two of "b".
    expect(ids(orderByConversations(hits, { places, prior: 4, kept: 0 }))).toEqual(['b:0.5', 'a:0.9', 'b:0.4', 'a:0.7', 'c:0.8', 'c:0.6']);
    expect(ids(orderByConversations(hits, { places, prior: 100, kept: 0 }))).toEqual(['b:0.5', 'b:0.4', 'a:0.9', 'a:0.7', 'c:0.8', 'c:0.6']);
  });

  it('ranks by the prior at a decay of 1 too', () => {
    expect(ids(orderByConversations(hits, { places, prior: 100, kept: 0, decay: 1 }))).toEqual(['b:0.5', 'b:0.4', 'a:0.9', 'a:0.7', 'c:0.8', 'c:0.6']);
  });

  it('keeps the first turns of the diversity pick in their places, and counts them in the pick after', () => {
    const one = [hit('a', 0.9), hit('a', 0.89), hit('a', 0.88), hit('a', 0.87), hit('d', 0.1), hit('a', 0.05), hit('e', 0.04)];
    const picked = diversifyByConversation(one);
    const ordered = orderByConversations(one, { places: ranking('d', 'e', 'a'), prior: 100, kept: 3 });
    expect(ordered.slice(0, 3)).toEqual(picked.slice(0, 3));
    // "a" holds three kept turns: its fourth, below "d" and "e" by their conversations, stays below them.
    expect(ids(ordered.slice(3))).toEqual(['d:0.1', 'e:0.04', 'a:0.87', 'a:0.05']);
    expect(orderByConversations(one, { places: ranking('d'), prior: 100, kept: one.length })).toEqual(picked);
  });

  it('puts a conversation the ranking lacks after those it holds', () => {
    expect(ids(orderByConversations(hits, { places: ranking('c'), prior: 4, kept: 0 }))).toEqual(['c:0.8', 'c:0.6', 'a:0.9', 'a:0.7', 'b:0.5', 'b:0.4']);
  });
});
