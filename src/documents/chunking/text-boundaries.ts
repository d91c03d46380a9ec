import { sentenceSegments } from '../../text/sentence-segments.js';
import { windowedSegments } from '../../text/windowed-segments.js';

/**
 * Where a piece of text may be cut, from the most to the least natural place. Each function
 * returns offsets strictly inside `text`, ascending; a cut at `p` means the left piece ends at `p`.
 * Offsets are UTF-16 indices, like String.prototype.slice, so they map back onto the source.
 */
export type BoundaryFinder = (text: string) => number[];

const wordSegmenter = new Intl.Segmenter('en', { granularity: 'word' });
const graphemeSegmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * How far from a window's end a word or grapheme boundary must be for text beyond the window not to
 * move it: their rules look a character or two ahead (past combining marks); a dictionary word
 * this close to a cut may be placed otherwise, which only moves where a piece may be cut.
 */
const LOOK_AHEAD = 64;
const settledBefore = (part: string): number => part.length - LOOK_AHEAD;

/** After each run of blank lines, so a paragraph keeps its trailing separator. */
export const paragraphBoundaries: BoundaryFinder = (text) => {
  const cuts: number[] = [];
  for (const match of text.matchAll(/\n[ \t]*\n\s*/g)) {
    const cut = match.index + match[0].length;
    if (cut > 0 && cut < text.length) cuts.push(cut);
  }
  return cuts;
};

/**
 * Unicode sentence starts. Single newlines are read as spaces first: Unicode ends a sentence at
 * every line break, which in hard-wrapped text (PDFs, e-mail) would cut mid-sentence.
 */
export const sentenceBoundaries: BoundaryFinder = (text) => {
  const cuts: number[] = [];
  for (const segment of sentenceSegments(text.replace(/[\r\n]/g, ' '))) {
    if (segment.index > 0) cuts.push(segment.index);
  }
  return cuts;
};

/** For lists, tables and code, whose lines carry no sentence punctuation. */
export const lineBoundaries: BoundaryFinder = (text) => {
  const cuts: number[] = [];
  for (let i = text.indexOf('\n'); i !== -1 && i + 1 < text.length; i = text.indexOf('\n', i + 1)) cuts.push(i + 1);
  return cuts;
};

/** Where a whitespace run ends: a word keeps its punctuation ("(see", "below).") together. */
export const whitespaceWordBoundaries: BoundaryFinder = (text) => {
  const cuts: number[] = [];
  // A whole run and a test of what follows it, not `\s+(?=\S)`: that retries a trailing run from
  // each of its characters, quadratic in its length.
  for (const match of text.matchAll(/\s+/g)) {
    const cut = match.index + match[0].length;
    if (cut > 0 && cut < text.length) cuts.push(cut);
  }
  return cuts;
};

/** Dictionary-based word starts, for scripts written without spaces (Chinese, Japanese, Thai). */
export const unicodeWordBoundaries: BoundaryFinder = (text) => {
  const cuts: number[] = [];
  for (const segment of windowedSegments(wordSegmenter, text, settledBefore)) {
    if (segment.index > 0 && segment.isWordLike) cuts.push(segment.index);
  }
  return cuts;
};

/**
 * Below U+0300 no character extends the one before it (combining marks, joiners, variation
 * selectors and the scripts that cluster all come later), so every offset of such a text is a
 * grapheme boundary but the one inside CR LF: what the segmenter would return, without its
 * per-character cost (a 256 KB run of one letter, cut character by character, spent a third of its
 * chunking there).
 */
const BEFORE_COMBINING_MARKS = /^[\u0000-\u02ff]*$/;

/** User-perceived characters: never half of a surrogate pair or of an emoji sequence. */
export const graphemeBoundaries: BoundaryFinder = (text) => {
  const cuts: number[] = [];
  if (BEFORE_COMBINING_MARKS.test(text)) {
    for (let i = 1; i < text.length; i++) if (text.charCodeAt(i - 1) !== 13 || text.charCodeAt(i) !== 10) cuts.push(i);
    return cuts;
  }
  for (const segment of windowedSegments(graphemeSegmenter, text, settledBefore)) if (segment.index > 0) cuts.push(segment.index);
  return cuts;
};

export const SPLIT_LEVELS: readonly BoundaryFinder[] = [
  paragraphBoundaries,
  sentenceBoundaries,
  lineBoundaries,
  whitespaceWordBoundaries,
  unicodeWordBoundaries,
  graphemeBoundaries,
];
