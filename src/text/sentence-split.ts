import { sentenceSegments } from './sentence-segments.js';

/** A sentence of a text, with its place in that text (UTF-16 offsets, as `String.slice` takes them). */
export interface SentenceSpan {
  text: string;
  start: number;
  end: number;
}

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
/** The longest word of TITLES and ABBREVIATIONS, and a margin: a longer word is in neither. */
const WORD_WINDOW = 16;
const LAST_WORD = /(\p{L}+)\.$/u;
const LETTER = /[a-z]/i;
const WHITESPACE = /\s/;
const INITIAL = /(?:^|[\s(])\p{Lu}\.$/u;
const INITIAL_AFTER = /[\s(]\p{Lu}\.$/u;
const CLOSERS = '"\')]';
const STOPS = '.!?:;';

/**
 * Splits text into sentences: UAX #29 boundaries, then joined back where the break was after an
 * abbreviation, an initial, or a line wrapped inside a sentence. Each sentence is trimmed, and its
 * offsets point at the trimmed text.
 */
export function splitSentenceSpans(text: string): SentenceSpan[] {
  const pieces: { start: number; end: number }[] = [];
  for (const { segment, index } of sentenceSegments(text)) {
    const end = index + segment.length;
    const previous = pieces.at(-1);
    if (previous && continuesSentence(text, previous, segment)) previous.end = end;
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

/**
 * Whether `next` goes on the sentence of `text[start, end)`. It reads only the end of that piece
 * (its trailing whitespace, stop and last word) and never the piece whole: a sentence joined from
 * thousands of wrapped lines would otherwise be read again at every line, quadratic in its length.
 * Each backward scan stops at a character the piece's previous decision did not read, so every
 * character is read a bounded number of times.
 */
function continuesSentence(text: string, { start, end }: { start: number; end: number }, next: string): boolean {
  const nextStart = next.trimStart();
  if (nextStart === '') return true;
  let ending = end;
  let newlines = 0;
  while (ending > start && WHITESPACE.test(text[ending - 1] as string)) {
    if (text[--ending] === '\n') newlines += 1;
  }
  // A blank line ends whatever came before it.
  if (newlines >= 2) return false;
  if (newlines === 1) {
    // A line wrapped inside a sentence: no stop at its end, and lower case goes on after it.
    return !endsWithStop(text, start, ending) && /^\p{Ll}/u.test(nextStart);
  }
  if (text[ending - 1] !== '.') return false;
  const word = LAST_WORD.exec(text.slice(Math.max(start, ending - WORD_WINDOW), ending))?.[1]?.toLowerCase();
  if (word !== undefined && TITLES.has(word)) return !endsParagraph(nextStart);
  if ((word !== undefined && ABBREVIATIONS.has(word)) || endsDotted(text, start, ending)) return /^[\p{Ll}\d]/u.test(nextStart);
  if (endsWithInitial(text, start, ending)) return /^\p{Lu}/u.test(nextStart);
  return false;
}

/** A stop, then any closing quotes and brackets, ends `text[start, end)`. */
function endsWithStop(text: string, start: number, end: number): boolean {
  let at = end;
  while (at > start && CLOSERS.includes(text[at - 1] as string)) at -= 1;
  return at > start && STOPS.includes(text[at - 1] as string);
}

/** "e.g.", "i.e." and the like: two or more letter-stop pairs after a space, a bracket or the piece's start. */
function endsDotted(text: string, start: number, end: number): boolean {
  let at = end;
  let pairs = 0;
  while (at - 2 >= start && text[at - 1] === '.' && LETTER.test(text[at - 2] as string)) {
    at -= 2;
    pairs += 1;
  }
  return pairs >= 2 && opensWord(text, start, at);
}

/** "J." of "J. R. R. Tolkien": one capital after a space, a bracket or the piece's start. */
function endsWithInitial(text: string, start: number, end: number): boolean {
  // A space or bracket, a capital (two units outside the Basic Multilingual Plane) and the stop.
  const from = end - 4;
  return from > start ? INITIAL_AFTER.test(text.slice(from, end)) : INITIAL.test(text.slice(start, end));
}

/** Nothing, a space or an opening bracket before `at` (the piece starts at `start`). */
function opensWord(text: string, start: number, at: number): boolean {
  return at === start || WHITESPACE.test(text[at - 1] as string) || text[at - 1] === '(';
}

/** A heading or list item starts a block of its own, whatever precedes it. */
function endsParagraph(next: string): boolean {
  return /^(?:#{1,6}\s|[-*+]\s|\d+[.)]\s)/.test(next);
}
