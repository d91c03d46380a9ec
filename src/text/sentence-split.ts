/** A sentence of a text, with its place in that text (UTF-16 offsets, as `String.slice` takes them). */
export interface SentenceSpan {
  text: string;
  start: number;
  end: number;
}

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Words that end in a full stop without ending the sentence: titles before a name, month and
 * address abbreviations, Latin shorthands. `Intl.Segmenter` (UAX #29) already keeps "e.g." and
 * "U.S." whole, but breaks after "Mr." and "St." because a capital follows.
 */
const TITLES = new Set('mr mrs ms dr prof st sr jr mt ft fr rev gen col capt lt sgt gov sen rep pres hon messrs mme mlle'.split(' '));
/** These also end sentences ("…, pears etc."), so they hold one together only before lower case or a number. */
const ABBREVIATIONS = new Set(
  (
    'jan feb mar apr jun jul aug sep sept oct nov dec no nos vol vols pp p ch sec fig figs ' +
    'approx ca cf vs viz al etc esp est inc ltd co corp dept univ ave blvd rd'
  ).split(' '),
);
/** "e.g.", "i.e." and the like, which the segmenter leaves whole only when lower case follows. */
const DOTTED = /(?:^|[\s(])(?:[a-z]\.){2,}$/i;
/** "J." of "J. R. R. Tolkien": one capital, read as an initial when a capital follows. */
const INITIAL = /(?:^|[\s(])\p{Lu}\.$/u;
const LAST_WORD = /([\p{L}]+)\.$/u;

/**
 * Splits text into sentences: UAX #29 boundaries, then joined back where the break was after an
 * abbreviation, an initial, or a line wrapped inside a sentence. Each sentence is trimmed, and its
 * offsets point at the trimmed text.
 */
export function splitSentenceSpans(text: string): SentenceSpan[] {
  const pieces: { start: number; end: number }[] = [];
  for (const { segment, index } of segmenter.segment(text)) {
    const end = index + segment.length;
    const previous = pieces.at(-1);
    if (previous && continuesSentence(text.slice(previous.start, previous.end), segment)) previous.end = end;
    else pieces.push({ start: index, end });
  }
  const spans: SentenceSpan[] = [];
  for (const piece of pieces) {
    const raw = text.slice(piece.start, piece.end);
    const lead = raw.length - raw.trimStart().length;
    const trimmed = raw.trim();
    if (trimmed === '') continue;
    spans.push({ text: trimmed, start: piece.start + lead, end: piece.start + lead + trimmed.length });
  }
  return spans;
}

export function splitSentences(text: string): string[] {
  return splitSentenceSpans(text).map((s) => s.text);
}

function continuesSentence(previous: string, next: string): boolean {
  const nextStart = next.trimStart();
  if (nextStart === '') return true;
  // A blank line ends whatever came before it.
  if (/\n[^\S\n]*\n\s*$/.test(previous)) return false;
  const ending = previous.trimEnd();
  if (/\n\s*$/.test(previous)) {
    // A line wrapped inside a sentence: no stop at its end, and lower case goes on after it.
    return !/[.!?:;]["')\]]*$/.test(ending) && /^\p{Ll}/u.test(nextStart);
  }
  if (!ending.endsWith('.')) return false;
  const word = LAST_WORD.exec(ending)?.[1]?.toLowerCase();
  if (word !== undefined && TITLES.has(word)) return !endsParagraph(nextStart);
  if ((word !== undefined && ABBREVIATIONS.has(word)) || DOTTED.test(ending)) return /^[\p{Ll}\d]/u.test(nextStart);
  if (INITIAL.test(ending)) return /^\p{Lu}/u.test(nextStart);
  return false;
}

/** A heading or list item starts a block of its own, whatever precedes it. */
function endsParagraph(next: string): boolean {
  return /^(?:#{1,6}\s|[-*+]\s|\d+[.)]\s)/.test(next);
}
