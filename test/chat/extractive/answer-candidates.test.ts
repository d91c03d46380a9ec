import { describe, expect, it } from 'vitest';
import { SOURCE_CHARS_READ, answerCandidates } from '../../../src/chat/extractive/answer-candidates.js';
import type { Source } from '../../../src/retrieval/source.js';

const turn = (question: string): Source => ({
  id: 1,
  kind: 'turn',
  conversationId: '0b5b8f47-6d0e-4d69-9a57-2f6f0e6a7c11',
  turn: 1,
  question,
  answer: 'Noted, and here is a long answer that must never be quoted.',
  at: '2026-11-01T10:00:00.000Z',
  score: 1,
});

const memory = (content: string): Source => ({ id: 2, kind: 'memory', key: 'notes', agentId: 'default', content, tags: [], score: 1 });

describe('answerCandidates on a stored megabyte', () => {
  const megabyte = 'The garden gate is painted blue. '.repeat(32_000);

  it('one chat stalls every tenant: a megabyte message is read only for its first SOURCE_CHARS_READ characters', () => {
    for (const source of [turn(megabyte), memory(megabyte)]) {
      const candidates = answerCandidates([source]);
      expect(candidates.length).toBeGreaterThan(0);
      const read = candidates.reduce((sum, candidate) => sum + candidate.text.length, 0);
      expect(read).toBeLessThanOrEqual(SOURCE_CHARS_READ);
      expect(read).toBeGreaterThan(SOURCE_CHARS_READ * 0.9);
    }
  });

  it('still quotes a sentence of the head, and never the answer a turn got', () => {
    const candidates = answerCandidates([turn(`My locker code is 4512. ${megabyte}`)]);
    expect(candidates[0]?.text).toBe('My locker code is 4512.');
    expect(candidates.some((candidate) => candidate.text.includes('Noted'))).toBe(false);
  });
});
