import { describe, expect, it } from 'vitest';
import { splitSentenceSpans, splitSentences } from '../../src/text/sentence-split.js';

describe('splitSentences', () => {
  it('splits on sentence ends and lines', () => {
    expect(splitSentences('One. Two!\nThree? four')).toEqual(['One.', 'Two!', 'Three?', 'four']);
  });
  it('does not break after abbreviations, initials or decimals', () => {
    expect(splitSentences("Mr. Smith met Dr. Jones at St. Paul's on Jan. 5. It cost $4.50, e.g. for tea. J. R. R. Tolkien wrote it.")).toEqual([
      "Mr. Smith met Dr. Jones at St. Paul's on Jan. 5.",
      'It cost $4.50, e.g. for tea.',
      'J. R. R. Tolkien wrote it.',
    ]);
  });
  it('keeps a sentence wrapped over lines whole', () => {
    expect(splitSentences('A line that wraps\nonto the next one. Next.')).toEqual(['A line that wraps\nonto the next one.', 'Next.']);
  });
  it('gives each sentence its place in the text', () => {
    const text = '  Dr. Who arrived.\n\nHe left.';
    for (const span of splitSentenceSpans(text)) expect(text.slice(span.start, span.end)).toBe(span.text);
    expect(splitSentenceSpans(text).map((s) => s.text)).toEqual(['Dr. Who arrived.', 'He left.']);
  });
});
