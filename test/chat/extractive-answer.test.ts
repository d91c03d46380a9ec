import { describe, expect, it } from 'vitest';
import { NOTHING_FOUND_ANSWER, extractiveAnswer, queryTerms, splitSentences } from '../../src/chat/extractive-answer.js';
import { SourceList } from '../../src/chat/sources.js';

function sources() {
  const list = new SourceList();
  const now = new Date(0);
  const save = (key: string, content: string, score: number) =>
    list.addMemory({ memory: { key, content, tags: [], metadata: {}, agentId: 'a', userId: null, validTo: null, expiresAt: null, createdAt: now, updatedAt: now }, score });
  save('tea', 'Alice prefers green tea. She dislikes coffee.', 0.9);
  save('bike', 'Bob rides his bike to work.', 0.5);
  save('drinks', 'Alice drinks green tea every afternoon in the garden.', 0.4);
  return list.all();
}

describe('queryTerms / splitSentences', () => {
  it('drops stopwords and stems', () => {
    expect([...queryTerms('What does Alice drink?')]).toEqual(['alic', 'drink']);
    expect(queryTerms('drinks')).toEqual(queryTerms('drinking'));
  });
  it('splits on sentence ends and newlines', () => {
    expect(splitSentences('One. Two!\nThree? four')).toEqual(['One.', 'Two!', 'Three?', 'four']);
  });
});

describe('extractiveAnswer', () => {
  it('picks the best-overlapping sentences, each with its citation', () => {
    const { answer, citedIds } = extractiveAnswer('What does Alice drink in the afternoon?', sources());
    // Three terms match in source 3, one in source 1; Bob's bike matches nothing.
    expect(answer).toBe('Alice drinks green tea every afternoon in the garden. [3] Alice prefers green tea. [1]');
    expect(citedIds).toEqual([3, 1]);
  });

  it('says so when nothing matches', () => {
    expect(extractiveAnswer('quantum chromodynamics', sources())).toEqual({ answer: NOTHING_FOUND_ANSWER, citedIds: [] });
    expect(extractiveAnswer('what is it?', sources()).answer).toBe(NOTHING_FOUND_ANSWER);
  });

  it('limits the number of sentences', () => {
    expect(extractiveAnswer('Alice green tea', sources(), 1).citedIds).toEqual([1]);
  });

  it('quotes past turns, saying who said what', () => {
    const list = new SourceList();
    list.addTurn({
      conversationId: 'c',
      turn: 3,
      question: 'Remember that my locker code is 4512.',
      answer: 'Noted: your locker code is 4512.',
      at: new Date('2026-05-12T09:00:00Z'),
      agentId: 'a',
      userId: null,
      score: 0.3,
      ranks: { vector: 1, text: 1 },
    });
    expect(extractiveAnswer('What is my locker code?', list.all(), 1)).toEqual({ answer: 'User: Remember that my locker code is 4512. [1]', citedIds: [1] });
    // Its questions are not answers, however many words they share with the new one.
    list.addTurn({
      conversationId: 'c',
      turn: 4,
      question: 'What is my locker code?',
      answer: 'Your locker code is 4512.',
      at: new Date('2026-05-13T09:00:00Z'),
      agentId: 'a',
      userId: null,
      score: 0.9,
      ranks: { vector: 1, text: 1 },
    });
    expect(extractiveAnswer('What is my locker code?', list.all(), 3).answer).not.toContain('?');
  });
});
