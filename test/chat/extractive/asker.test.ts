import { describe, expect, it } from 'vitest';
import { askerWords, namingTheAsker } from '../../../src/chat/extractive/asker.js';
import { NOT_ANSWERED_ANSWER, extractiveAnswer } from '../../../src/chat/extractive/extractive-answer.js';
import { SourceList } from '../../../src/chat/sources.js';
import { createHashEmbedder } from '../../../testkit/hash-embedder.js';

describe('the asker named in the question', () => {
  it('reads "I", "me", "my", "mine" and "myself" as the user, by name and as "user"', () => {
    expect(askerWords('alice')).toBe('user alice');
    expect(askerWords('u-1')).toBe('user u 1');
    expect(askerWords(null)).toBeUndefined();
    expect(namingTheAsker('What do I drink? Tell me my order, i forgot.', 'user alice')).toBe(
      'What do user alice drink? Tell user alice user alice order, user alice forgot.',
    );
    // Words that only contain the pronoun's letters stay.
    expect(namingTheAsker('Is it mine or Ivy’s, in Miami?', 'user alice')).toBe('Is it user alice or Ivy’s, in Miami?');
    expect(namingTheAsker('What do I drink?', undefined)).toBe('What do I drink?');
    // A roman numeral is no one (a SQuAD question asked of "Block I and Block II" lost its answer).
    expect(namingTheAsker('When was Block I tested, and when I asked?', 'user alice')).toBe('When was Block I tested, and when user alice asked?');
    expect(namingTheAsker('When I moved, where did World War I end?', 'user alice')).toBe('When user alice moved, where did World War I end?');
  });

  it('matches the user\'s own turns, whose "I" is the asker\'s too', async () => {
    const list = new SourceList();
    list.addTurn({
      conversationId: 'c',
      turn: 1,
      question: 'Please note my locker code is 4512.',
      answer: 'Noted.',
      at: new Date(0),
      agentId: 'a',
      userId: 'u-1',
      score: 1,
      ranks: { vector: 1, text: 1 },
    });
    for (const question of ['What is my locker code?', 'Which code did I give you for my locker?']) {
      const { answer } = await extractiveAnswer(question, list.all(), { userId: 'u-1', embedder: createHashEmbedder(64) });
      expect(answer).toBe('Please note my locker code is 4512. [1]');
    }
  });

  it("declines a first-person question the user's memory does not answer", async () => {
    const list = new SourceList();
    list.addMemory({
      memory: {
        key: 'tea',
        content: 'Alice prefers green tea in the afternoon',
        tags: [],
        metadata: {},
        agentId: 'a',
        userId: 'alice',
        sources: [],
        validFrom: null,
        validUntil: null,
        validTo: null,
        expiresAt: null,
        status: 'active',
        quarantineReasons: [],
        createdAt: new Date(0),
        updatedAt: new Date(0),
      },
      score: 1,
    });
    const { answer } = await extractiveAnswer('What is my passport number?', list.all(), { userId: 'alice' });
    expect(answer.startsWith(NOT_ANSWERED_ANSWER)).toBe(true);
  });
});
