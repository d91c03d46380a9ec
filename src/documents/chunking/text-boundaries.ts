/**
 * Where a piece of text may be cut, from the most to the least natural place. Each function
 * returns offsets strictly inside `text`, ascending; a cut at `p` means the left piece ends at `p`.
 * Offsets are UTF-16 indices, like String.prototype.slice, so they map back onto the source.
 */
export type BoundaryFinder = (text: string) => number[];

const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });
const wordSegmenter = new Intl.Segmenter('en', { granularity: 'word' });
const graphemeSegmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

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
  for (const segment of sentenceSegmenter.segment(text.replace(/[\r\n]/g, ' '))) {
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
  for (const match of text.matchAll(/\s+(?=\S)/g)) {
    const cut = match.index + match[0].length;
    if (cut > 0) cuts.push(cut);
  }
  return cuts;
};

/** Dictionary-based word starts, for scripts written without spaces (Chinese, Japanese, Thai). */
export const unicodeWordBoundaries: BoundaryFinder = (text) => {
  const cuts: number[] = [];
  for (const segment of wordSegmenter.segment(text)) {
    if (segment.index > 0 && segment.isWordLike) cuts.push(segment.index);
  }
  return cuts;
};

/** User-perceived characters: never half of a surrogate pair or of an emoji sequence. */
export const graphemeBoundaries: BoundaryFinder = (text) => {
  const cuts: number[] = [];
  for (const segment of graphemeSegmenter.segment(text)) if (segment.index > 0) cuts.push(segment.index);
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
