import { describe, expect, it } from 'vitest';
import { clipChars, clipToTokens, truncateMiddle } from '../../src/compaction/clip-text.js';
import { estimateTextTokens } from '../../src/compaction/token-estimate.js';

describe('clip-text', () => {
  it('clips to a character count without splitting a surrogate pair', () => {
    expect(clipChars('short', 10)).toBe('short');
    expect(clipChars('abcdefghij', 5)).toBe('abcd…');
    const clipped = clipChars('ab😀cd', 4);
    expect(clipped).toBe('ab…');
    expect(clipped.length).toBeLessThanOrEqual(4);
  });

  it('clips to a token budget at a sentence or word boundary', () => {
    const text = 'First sentence here. Second sentence is a little longer than the first one. Third one.';
    const clipped = clipToTokens(text, 12);
    expect(estimateTextTokens(clipped)).toBeLessThanOrEqual(12);
    expect(clipped.endsWith('…')).toBe(true);
    expect(text.startsWith(clipped.slice(0, -1))).toBe(true);
    expect(clipToTokens(text, 1_000)).toBe(text);
  });

  it('keeps the head and tail of a long text and says how much was cut', () => {
    const text = `HEAD ${'x'.repeat(5_000)} TAIL`;
    const cut = truncateMiddle(text, 400);
    expect(cut.length).toBeLessThanOrEqual(400);
    expect(cut.startsWith('HEAD')).toBe(true);
    expect(cut.endsWith('TAIL')).toBe(true);
    expect(cut).toMatch(/…\[\d+ characters cut to fit the context window\]…/);
    expect(truncateMiddle('small', 400)).toBe('small');
  });
});
