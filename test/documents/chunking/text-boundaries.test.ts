import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { graphemeBoundaries } from '../../../src/documents/chunking/text-boundaries.js';

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
const segmenterCuts = (text: string) => [...segmenter.segment(text)].map((s) => s.index).filter((i) => i > 0);

describe('grapheme boundaries', () => {
  it('cut text below U+0300 where the segmenter does, CR LF kept whole', () => {
    const char = fc.oneof(
      fc.integer({ min: 0, max: 0x2ff }).map((c) => String.fromCharCode(c)),
      fc.constantFrom('\r', '\n', '\r\n'),
    );
    fc.assert(
      fc.property(fc.array(char, { maxLength: 300 }), (chars) => {
        const text = chars.join('');
        expect(graphemeBoundaries(text)).toEqual(segmenterCuts(text));
      }),
      { numRuns: 500 },
    );
  });

  it('leave a combining mark, an emoji sequence and a surrogate pair whole', () => {
    for (const text of ['cafe\u0301 au lait', 'a👩‍👩‍👧b', 'x😀y', 'x\r\ny']) expect(graphemeBoundaries(text)).toEqual(segmenterCuts(text));
    expect(graphemeBoundaries('e\u0301e')).toEqual([2]);
    expect(graphemeBoundaries('a\r\nb')).toEqual([1, 3]);
  });
});
