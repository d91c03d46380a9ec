import { describe, expect, it } from 'vitest';
import { type TurnSource, sourceText } from '../../src/retrieval/source.js';

describe('sourceText', () => {
  const turn = (question: string): TurnSource => ({
    id: 1,
    kind: 'turn',
    conversationId: '00000000-0000-4000-8000-000000000000',
    turn: 1,
    question,
    answer: 'Gate B14.',
    at: '2025-04-02T08:00:00.000Z',
    score: 1,
  });

  it("labels a past turn's two sides", () => {
    expect(sourceText(turn('Which gate?'))).toBe('User: Which gate?\nAssistant: Gate B14.');
  });

  it('gives an imported opening, which the assistant spoke, no empty user line', () => {
    expect(sourceText(turn(''))).toBe('Assistant: Gate B14.');
  });
});
