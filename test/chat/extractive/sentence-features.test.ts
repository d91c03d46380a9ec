import { describe, expect, it } from 'vitest';
import type { AnswerCandidate } from '../../../src/chat/extractive/answer-candidates.js';
import { answerTypeOf, hasAnswerOfType } from '../../../src/chat/extractive/answer-type.js';
import { lexicalFeatures } from '../../../src/chat/extractive/sentence-features.js';

/** Candidates of one source each, in order, chained as a passage. */
function passage(sourceId: number, ...texts: string[]): AnswerCandidate[] {
  const out: AnswerCandidate[] = [];
  for (const text of texts) {
    const c: AnswerCandidate = { sourceId, sourceRank: sourceId, text, headingPath: [] };
    const previous = out.at(-1);
    if (previous) c.previous = previous;
    out.push(c);
  }
  return out;
}

describe('answer types', () => {
  it('tells measures, places and reasons apart', () => {
    expect(answerTypeOf('How long is the bridge?')).toBe('quantity');
    expect(answerTypeOf('How old was she when she died?')).toBe('quantity');
    expect(answerTypeOf('How many towers does it have?')).toBe('number');
    expect(answerTypeOf('Where was the treaty signed?')).toBe('place');
    expect(answerTypeOf('In what city was the treaty signed?')).toBe('place');
    expect(answerTypeOf('Why did the bridge close?')).toBe('reason');
  });

  it('finds a number with a unit for a measure, not a bare count', () => {
    expect(hasAnswerOfType('quantity', 'The main span is 503 metres long.', 'How long is the bridge?')).toBe(true);
    expect(hasAnswerOfType('quantity', 'It took twelve years to build.', 'How long did the bridge take to build?')).toBe(true);
    expect(hasAnswerOfType('quantity', 'The bridge has 2 towers.', 'How long is the bridge?')).toBe(false);
  });

  it('finds a named place after a preposition the question does not name', () => {
    expect(hasAnswerOfType('place', 'The treaty was signed in Versailles.', 'Where was the treaty signed?')).toBe(true);
    expect(hasAnswerOfType('place', 'The treaty was signed by Wilson.', 'Where was the treaty signed?')).toBe(false);
    expect(hasAnswerOfType('place', 'The treaty of Versailles was signed in June.', 'Where was the treaty of Versailles signed?')).toBe(false);
  });

  it('finds a cause for a reason', () => {
    expect(hasAnswerOfType('reason', 'The bridge closed because its cables had rusted.', 'Why did the bridge close?')).toBe(true);
    expect(hasAnswerOfType('reason', 'The bridge closed in 1990.', 'Why did the bridge close?')).toBe(false);
  });
});

describe('lexicalFeatures', () => {
  it('scores the question words side by side above the same words scattered', () => {
    const candidates = passage(1, 'The harbour bridge was painted grey in a long and costly job.', 'The harbour was busy, and the old bridge was closed.');
    const { features } = lexicalFeatures('Which harbour bridge was painted?', candidates);
    expect(features[0]!.proximity).toBeGreaterThan(features[1]!.proximity);
    // Both have "harbour" and "bridge"; side by side in the first only.
    const [near, far] = lexicalFeatures('harbour bridge', candidates).features;
    expect(near!.proximity).toBeCloseTo(1);
    expect(far!.proximity).toBeLessThanOrEqual(0.5);
  });

  it('marks the sentence with the rarest question word, the position in the source and the source coverage', () => {
    const candidates = [
      ...passage(1, 'Tea is grown in China.', 'Most tea is drunk hot.', 'Some tea is drunk iced in Japan.'),
      ...passage(2, 'Coffee came later.', 'Tea and coffee both hold caffeine.'),
    ];
    const { features } = lexicalFeatures('Where is tea drunk iced?', candidates);
    expect(features.map((f) => f.rare)).toEqual([0, 0, 1, 0, 0]);
    expect(features.map((f) => f.position)).toEqual([1, 1 / 2, 1 / 3, 1, 1 / 2]);
    // Source 1 has every word of the question, source 2 only "tea".
    expect(features[0]!.passage).toBeCloseTo(1);
    expect(features[3]!.passage).toBeLessThan(features[0]!.passage);
    expect(features[3]!.passage).toBe(features[4]!.passage);
  });

  it('rates an answer of the wanted kind by how close it sits to the question words', () => {
    const candidates = passage(
      1,
      'The bridge opened in 1932 after years of work.',
      'In 1932 the city grew, and later the bridge opened.',
      'The bridge opened to traffic.',
    );
    const { features } = lexicalFeatures('When did the bridge open?', candidates);
    // "opened in 1932": two words apart; "1932 … bridge opened": far; no date: nothing.
    expect(features[0]!.near).toBeCloseTo(1 / 2);
    expect(features[1]!.near).toBeLessThan(features[0]!.near);
    expect(features[1]!.near).toBeGreaterThan(0);
    expect(features[2]!.near).toBe(0);
    expect(features.map((f) => f.type)).toEqual([1, 1, 0]);
  });

  it('measures length in content words', () => {
    const candidates = passage(
      1,
      'The tower was painted.',
      'The tower was painted by Gustave Eiffel with the help of a large team of painters who worked on it for years.',
    );
    const { features } = lexicalFeatures('Who painted the tower?', candidates);
    expect(features[0]!.length).toBeCloseTo(2 / 40);
    expect(features[1]!.length).toBeGreaterThan(features[0]!.length);
  });
});
