import { describe, expect, it } from 'vitest';
import { diversifyByConversation } from '../../src/conversations/conversation-diversity.js';
import { conversationStandings, coverConversations, orderByConversations } from '../../src/conversations/conversation-prior.js';
import { TURN_BOOSTS, type TurnHit, type TurnRankingContext } from '../../src/conversations/turn-corpus.js';
import { applyBoosts } from '../../src/retrieval/boost.js';

const hit = (conversationId: string, score: number) => ({ conversationId, score, id: `${conversationId}:${score}` });
const ids = (hits: { id: string }[]) => hits.map((h) => h.id);
// Conversations in this order, with these scores.
const scored = (...pairs: (readonly [string, number])[]) =>
  conversationStandings(pairs.map(([conversationId, score]) => ({ conversationId, score, turns: [] })));
// Conversations ranked in this order, scored n, n - 1, … 1: shares 1, (n - 1) / n, … 1 / n.
const ranking = (...ids: string[]) => scored(...ids.map((id, i) => [id, ids.length - i] as const));

describe('conversationStandings', () => {
  it("gives each conversation its place and its score over the best one's", () => {
    const standings = scored(['a', 0.2], ['b', 0.1], ['c', -0.1]);
    expect([...standings]).toEqual([
      ['a', { place: 1, share: 1 }],
      ['b', { place: 2, share: 0.5 }],
      ['c', { place: 3, share: 0 }],
    ]);
    expect(scored(['a', 0]).get('a')).toEqual({ place: 1, share: 0 });
  });

  it('counts a conversation lifted past better-scored ones (by the time window) as the best of them', () => {
    const lifted = scored(['w', 0.05], ['a', 0.2], ['b', 0.1]);
    expect([...lifted.values()]).toEqual([
      { place: 1, share: 1 },
      { place: 2, share: 1 },
      { place: 3, share: 0.5 },
    ]);
    expect(conversationStandings([]).size).toBe(0);
  });
});

describe('orderByConversations', () => {
  // Turns of three conversations, best first; the conversation ranking puts "b" first.
  const hits = [hit('a', 0.9), hit('c', 0.8), hit('a', 0.7), hit('c', 0.6), hit('b', 0.5), hit('b', 0.4)];
  const places = ranking('b', 'a', 'c');

  it('is the diversity pick alone without a prior or a ranking', () => {
    expect(orderByConversations(hits, { standings: places, prior: 0, kept: 0 })).toEqual(diversifyByConversation(hits));
    expect(orderByConversations(hits, { prior: 4, kept: 0 })).toEqual(diversifyByConversation(hits));
  });

  it('lifts the turns of a conversation far ahead of the others past their better-placed turns', () => {
    expect(ids(orderByConversations(hits, { standings: places, prior: 4, kept: 0 }))).toEqual(['b:0.5', 'b:0.4', 'a:0.9', 'a:0.7', 'c:0.8', 'c:0.6']);
    expect(ids(orderByConversations(hits, { standings: places, prior: 100, kept: 0 }))).toEqual(['b:0.5', 'b:0.4', 'a:0.9', 'a:0.7', 'c:0.8', 'c:0.6']);
  });

  it('orders the turns of conversations scored alike by their own places, whatever their order', () => {
    // "b" is ranked first by a hair: the first turn of "a" goes before both of its turns.
    const alike = scored(['b', 1], ['a', 0.97], ['c', 0.5]);
    expect(ids(orderByConversations(hits, { standings: alike, prior: 4, kept: 0 }))).toEqual(['a:0.9', 'b:0.5', 'b:0.4', 'a:0.7', 'c:0.8', 'c:0.6']);
  });

  it('keeps a session far ahead of the rest together past the kept turns, before the first turns of sessions far below it', () => {
    // LongMemEval's "dilute tea tree oil" question: one session scored 0.143, the next 0.107, and
    // by place the diversity pick let sessions far below it pass its later turns (the answer 15th).
    const one = [
      ...[0.9, 0.89, 0.88, 0.87].map((score) => hit('a', score)),
      hit('b', 0.86),
      hit('c', 0.85),
      hit('a', 0.84),
      hit('d', 0.83),
      hit('a', 0.82),
      hit('e', 0.81),
    ];
    const standings = scored(['a', 0.143], ['b', 0.107], ['c', 0.095], ['d', 0.09], ['e', 0.085]);
    const ordered = ids(orderByConversations(one));
    expect(ordered).toEqual(ids(orderByConversations(one, { standings: undefined })));
    const byShare = ids(orderByConversations(one, { standings }));
    expect(byShare.slice(0, 4)).toEqual(ordered.slice(0, 4));
    const lastOfA = Math.max(...byShare.flatMap((id, i) => (id.startsWith('a:') ? [i] : [])));
    expect(byShare.indexOf('d:0.83')).toBeGreaterThan(lastOfA);
    expect(byShare.indexOf('e:0.81')).toBeGreaterThan(lastOfA);
  });

  it('ranks by the prior at a decay of 1 too', () => {
    expect(ids(orderByConversations(hits, { standings: places, prior: 100, kept: 0, decay: 1 }))).toEqual([
      'b:0.5',
      'b:0.4',
      'a:0.9',
      'a:0.7',
      'c:0.8',
      'c:0.6',
    ]);
  });

  it('keeps the first turns of the diversity pick in their places, and counts them in the pick after', () => {
    const one = [hit('a', 0.9), hit('a', 0.89), hit('a', 0.88), hit('a', 0.87), hit('d', 0.1), hit('a', 0.05), hit('e', 0.04)];
    const picked = diversifyByConversation(one);
    const ordered = orderByConversations(one, { standings: ranking('d', 'e', 'a'), prior: 100, kept: 3 });
    expect(ordered.slice(0, 3)).toEqual(picked.slice(0, 3));
    // "a" holds three kept turns: its fourth, below "d" and "e" by their conversations, stays below them.
    expect(ids(ordered.slice(3))).toEqual(['d:0.1', 'e:0.04', 'a:0.87', 'a:0.05']);
    expect(orderByConversations(one, { standings: ranking('d'), prior: 100, kept: one.length })).toEqual(picked);
  });

  it('puts a conversation the ranking lacks after those it holds', () => {
    expect(ids(orderByConversations(hits, { standings: ranking('c'), prior: 4, kept: 0 }))).toEqual(['c:0.8', 'c:0.6', 'a:0.9', 'a:0.7', 'b:0.5', 'b:0.4']);
  });
});

describe('coverConversations', () => {
  // A first page of four turns over two conversations; the ranking puts "c" and "d" next.
  const hits = [hit('a', 0.9), hit('b', 0.8), hit('a', 0.7), hit('b', 0.6), hit('a', 0.5), hit('e', 0.4), hit('d', 0.3), hit('c', 0.2), hit('c', 0.1)];
  const places = ranking('a', 'b', 'c', 'd', 'e');

  it("lists the best turn of each conversation ranked first that the first page lacks right after it, in the ranking's order", () => {
    expect(ids(coverConversations(hits, places, 4, 4))).toEqual(['a:0.9', 'b:0.8', 'a:0.7', 'b:0.6', 'c:0.2', 'd:0.3', 'a:0.5', 'e:0.4', 'c:0.1']);
  });

  it('leaves the first page as ranked, whatever the ranking says of its conversations', () => {
    expect(ids(coverConversations(hits, ranking('e', 'd', 'c', 'b', 'a'), 4, 4))).toEqual([
      'a:0.9',
      'b:0.8',
      'a:0.7',
      'b:0.6',
      'e:0.4',
      'd:0.3',
      'a:0.5',
      'c:0.2',
      'c:0.1',
    ]);
  });

  it('changes nothing when the first page holds enough conversations, or the list is no longer than the page', () => {
    expect(coverConversations(hits, places, 2, 4)).toEqual(hits);
    expect(coverConversations(hits.slice(0, 4), places, 5, 4)).toEqual(hits.slice(0, 4));
  });

  it('moves no conversation the ranking lacks', () => {
    expect(ids(coverConversations(hits, ranking('a', 'b', 'd'), 5, 4))).toEqual([
      'a:0.9',
      'b:0.8',
      'a:0.7',
      'b:0.6',
      'd:0.3',
      'a:0.5',
      'e:0.4',
      'c:0.2',
      'c:0.1',
    ]);
  });

  it("comes last among a turn list's steps: a turn the time window lifts into the first ten gets there, and the first ten are as ranked without it", () => {
    // Twelve turns of two conversations, then one each of six others, ranked c, d, … after them.
    const at = (day: number) => new Date(Date.UTC(2025, 0, day));
    const turn = (conversationId: string, score: number, day = 1): TurnHit => ({
      conversationId,
      turn: 1,
      question: `${conversationId} ${score}`,
      answer: '',
      at: at(day),
      agentId: 'a',
      userId: null,
      score,
      ranks: { vector: null, text: null },
    });
    const list = [
      ...Array.from({ length: 12 }, (_, i) => turn(i % 2 === 0 ? 'a' : 'b', 1 - i * 0.01)),
      ...['c', 'd', 'e', 'f', 'g'].map((c, i) => turn(c, 0.5 - i * 0.01)),
      turn('h', 0.1, 20),
    ];
    const context: TurnRankingContext = {
      timeWindow: { from: at(19), to: at(21), text: 'then' },
      conversationPrior: 4,
      conversationStandings: ranking('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'),
      conversationDecay: 1,
    };
    // A window's turn at place p goes to about p / 3.
    const weights = { timeWindow: 2 };
    const ranked = applyBoosts(TURN_BOOSTS, list, context, weights);
    const unCovered = applyBoosts(TURN_BOOSTS, list, { ...context, conversationCoverage: 0 }, weights);
    expect(ranked.slice(0, 10)).toEqual(unCovered.slice(0, 10));
    // The window's turn came into the first ten; c and d were added to a, b and h after them.
    expect(ranked.slice(0, 10).map((h) => h.conversationId)).toContain('h');
    expect(ranked.slice(10, 12).map((h) => h.conversationId)).toEqual(['c', 'd']);
    expect(unCovered.slice(10, 12).map((h) => h.conversationId)).not.toEqual(['c', 'd']);
    // Before the window's boost, moved turns would change which turns the boost lifts into the first ten.
    expect(TURN_BOOSTS.map((r) => r.name)).toEqual(['conversationDiversity', 'timeWindow', 'conversationCoverage']);
  });
});
