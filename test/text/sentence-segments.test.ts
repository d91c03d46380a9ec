import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sentenceSegments } from '../../src/text/sentence-segments.js';
import { assertProperty } from '../support/checked-property.js';

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });
const whole = (text: string) => [...segmenter.segment(text)].map(({ segment, index }) => ({ segment, index }));

/** Pieces that sit on the rules' edges: stops before lower case far ahead, closers, separators, astral letters. */
const PIECES = [
  'Mr.',
  ' ',
  '  ',
  '.',
  '!',
  '?',
  '\n',
  '\r\n',
  '\n\n',
  'a',
  'Zebra',
  'etc.',
  '1',
  '2.5',
  ')',
  '"',
  "'",
  '(',
  'e.g.',
  'J.',
  '。',
  '这是',
  '𝐀',
  '\u2028',
  '...',
  ',',
  'é',
  '\u0301',
];

describe('sentenceSegments', () => {
  it('segments as Intl.Segmenter does over the whole text, window by window', async () => {
    await assertProperty(
      fc.tuple(fc.array(fc.constantFrom(...PIECES), { maxLength: 120 }), fc.integer({ min: 1, max: 24 })),
      ([pieces, window]) => {
        const text = pieces.join('');
        expect([...sentenceSegments(text, window)]).toEqual(whole(text));
      },
      { numRuns: 2000 },
    );
  });

  it('covers the text without gaps, whatever the window', () => {
    const text = `${'1 '.repeat(300)}Done. ${'x'.repeat(3000)} end.`;
    for (const window of [1, 7, 64, 1024]) expect([...sentenceSegments(text, window)]).toEqual(whole(text));
  });
});
