import { SEGMENT_WINDOW, type TextSegment, isLowSurrogate, windowedSegments } from './windowed-segments.js';

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * A character that ends UAX #29's look-ahead past a sentence boundary: a letter (rule SB8 looks
 * for lower case across everything else), a sentence terminator or a paragraph separator. A
 * boundary followed by one inside the window is placed as it would be in the whole text.
 */
const SETTLES = /[\p{Lu}\p{Ll}\p{Lt}\p{Lo}.!?\n\r\u0085\u2028\u2029\u3002]/u;

/** The sentence segments of `text`, the same as `Intl.Segmenter`'s over the whole of it, in time linear in its length. */
export function sentenceSegments(text: string, window = SEGMENT_WINDOW): Generator<TextSegment> {
  return windowedSegments(segmenter, text, lastSettling, window);
}

function lastSettling(part: string): number {
  for (let i = part.length - 1; i >= 0; i--) {
    // A letter outside the Basic Multilingual Plane is read whole, from its first unit.
    const first = i > 0 && isLowSurrogate(part.charCodeAt(i)) ? i - 1 : i;
    if (SETTLES.test(String.fromCodePoint(part.codePointAt(first) as number))) return first;
  }
  return -1;
}
