import { approximateTokenCount } from '../text/approximate-token-count.js';
import { findMarkdownHeadings, type MarkdownHeading } from './chunking/markdown-headings.js';
import { SPLIT_LEVELS, sentenceBoundaries, unicodeWordBoundaries, whitespaceWordBoundaries } from './chunking/text-boundaries.js';

export interface ChunkOptions {
  /** Hard upper bound per chunk, as measured by `countTokens` on the chunk's text. */
  maxTokens: number;
  /**
   * Tokens of a chunk's end repeated at the start of the next chunk of the same section, so a
   * sentence cut by a chunk boundary is still whole in one of them. Default 0.
   */
  overlapTokens?: number;
  /** The embedder's tokenizer; default `approximateTokenCount`. Must count the text as embedded. */
  countTokens?: (text: string) => number;
  /** `markdown` (default) follows `#` headings; `plain` treats every line as text. */
  markup?: 'markdown' | 'plain';
  /**
   * Put adjacent whole sections that fit together into one chunk (default true), labelled with
   * their common heading path. Off: every section starts a new chunk.
   */
  mergeSections?: boolean;
}

export interface Chunk {
  index: number;
  /** Exactly `source.slice(start, end)`, without leading or trailing whitespace. */
  text: string;
  /**
   * Headings of the innermost section that holds the chunk, outermost first. Not part of `text`
   * nor of `tokenCount`: a caller that prepends it before embedding must lower `maxTokens` to
   * leave room for it.
   */
  headingPath: string[];
  start: number;
  end: number;
  tokenCount: number;
}

interface Range {
  start: number;
  end: number;
}

interface Block extends Range {
  headingPath: string[];
  /** A whole section (or a section's whole introduction), which may join its neighbours. */
  whole: boolean;
}

interface Section extends Range {
  level: number;
  path: string[];
  children: Section[];
}

/**
 * A range whose non-space length exceeds this many characters per token is taken not to fit
 * without asking the tokenizer, which keeps counting cheap on big documents. No subword
 * vocabulary packs that much text into a token; a wrong guess only splits the range into smaller
 * pieces, which are then packed back up to the limit with real counts.
 */
const MAX_CHARS_PER_TOKEN = 64;

/**
 * Splits Markdown or plain text into chunks of at most `maxTokens` tokens. Sections (headings)
 * are kept apart where they do not fit together; inside a section the text is cut at the most
 * natural boundary that fits: paragraph, then sentence, line, word, and as a last resort
 * character. Offsets refer to `source` as given.
 */
export function chunkText(source: string, options: ChunkOptions): Chunk[] {
  const { maxTokens, overlapTokens = 0, markup = 'markdown', mergeSections = true } = options;
  const countTokens = options.countTokens ?? approximateTokenCount;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new RangeError(`maxTokens must be a positive integer, got ${maxTokens}`);
  if (!Number.isInteger(overlapTokens) || overlapTokens < 0 || overlapTokens >= maxTokens) {
    throw new RangeError(`overlapTokens must be an integer in [0, maxTokens), got ${overlapTokens}`);
  }

  const headings = markup === 'markdown' ? findMarkdownHeadings(source) : [];
  const headingEnds = new Map(headings.map((h) => [h.start, h.end]));
  const onlyHeadings = (start: number, end: number): boolean => {
    for (let at = skipSpace(source, start); at < end; at = skipSpace(source, at)) {
      const headingEnd = headingEnds.get(at);
      if (headingEnd === undefined) return false;
      at = headingEnd;
    }
    return true;
  };
  /** Repeating a heading's underline or its second half as overlap would be noise. */
  const insideHeading = (at: number): boolean => {
    const h = headings[firstIndex(headings.length, (i) => headings[i]!.end >= at)];
    return h !== undefined && at > h.start;
  };
  /** A section that only wraps one subsection (a title over a single chapter) is labelled with it. */
  const innermostPath = (section: Section): string[] => {
    let s = section;
    while (s.children.length === 1 && onlyHeadings(s.start, s.children[0]!.start)) s = s.children[0]!;
    return s.path;
  };

  const nonSpaceBefore = nonSpacePrefixCounts(source);
  // Real tokenizers are slow per call (USE-lite's: ~2.5 ms even for a short text), and the same
  // ranges are asked about while splitting, packing and reporting: each is counted once.
  const counted = new Map<number | string, number>();
  const exactKeys = (source.length + 1) ** 2 <= Number.MAX_SAFE_INTEGER;
  const tokensOf = (start: number, end: number): number => {
    const key = exactKeys ? start * (source.length + 1) + end : `${start}:${end}`;
    let tokens = counted.get(key);
    if (tokens === undefined) counted.set(key, (tokens = countTokens(source.slice(start, end).trim())));
    return tokens;
  };
  const fits = (start: number, end: number, limit = maxTokens): boolean => {
    if (nonSpaceBefore[end]! - nonSpaceBefore[start]! > limit * MAX_CHARS_PER_TOKEN) return false;
    return tokensOf(start, end) <= limit;
  };

  /** Pieces covering [start, end) that each fit, cut at the coarsest level that achieves it. */
  const atomize = (start: number, end: number, level: number): Range[] => {
    if (isBlank(source, start, end) || fits(start, end)) return [{ start, end }];
    const finder = SPLIT_LEVELS[level];
    if (!finder) {
      throw new RangeError(`cannot chunk: "${source.slice(start, end)}" at offset ${start} is ${tokensOf(start, end)} tokens, over maxTokens ${maxTokens}`);
    }
    let cuts = finder(source.slice(start, end)).map((cut) => start + cut);
    // A heading stays with the paragraph it introduces, rather than being left as a chunk of its own.
    if (level === 0) cuts = cuts.filter((cut, i) => !onlyHeadings(i === 0 ? start : cuts[i - 1]!, cut));
    const bounds = [start, ...cuts, end];
    const pieces: Range[] = [];
    // Appended one by one: spread into push, a few hundred thousand pieces overflow the call stack.
    for (let i = 0; i + 1 < bounds.length; i++) for (const piece of atomize(bounds[i]!, bounds[i + 1]!, level + 1)) pieces.push(piece);
    return pieces;
  };

  /** Where, after a chunk ending at `end`, the next one may start to repeat at most `overlapTokens`. */
  const overlapStart = (chunkStart: number, end: number): number | undefined => {
    const starts = wordStarts(source, chunkStart, end).filter((at) => !insideHeading(at));
    // Searched from the chunk's end, first guessing the overlap's length in words from the
    // chunk's own words-per-token, so that a handful of small texts gets counted.
    const wordsPerToken = (starts.length + 1) / Math.max(1, tokensOf(chunkStart, end));
    const guess = Math.floor(overlapTokens * wordsPerToken) - 1;
    const fromEnd = lastTrue(0, starts.length, guess, (q) => fits(starts[starts.length - 1 - q]!, end, overlapTokens));
    if (fromEnd < 0) return undefined;
    const best = starts[starts.length - 1 - fromEnd]!;
    // A repeat that begins at a sentence start reads better, if it keeps at least half the overlap.
    const bestTokens = tokensOf(best, end);
    for (const cut of sentenceBoundaries(source.slice(chunkStart, end))) {
      const sentenceStart = skipSpace(source, chunkStart + cut);
      if (sentenceStart < best || sentenceStart >= end) continue;
      return 2 * tokensOf(sentenceStart, end) >= bestTokens ? sentenceStart : best;
    }
    return best;
  };

  /** The earliest start in [from, piece.start] from which the chunk still fits through `piece`. */
  const shrinkToFit = (from: number, piece: Range): number => {
    const starts = wordStarts(source, from, piece.start).filter((s) => s > from);
    const first = firstIndex(starts.length, (i) => fits(starts[i]!, piece.end));
    return first < starts.length ? starts[first]! : piece.start;
  };

  /** Greedy packing of the fitting pieces of [start, end), with overlap between the chunks. */
  const splitRange = (start: number, end: number, headingPath: string[]): Block[] => {
    if (isBlank(source, start, end)) return [];
    if (fits(start, end)) return [{ start, end, headingPath, whole: true }];
    const pieces = atomize(start, end, 0);
    const blocks: Block[] = [];
    let i = 0;
    let from = pieces[0]!.start;
    while (i < pieces.length) {
      if (!fits(from, pieces[i]!.end)) from = shrinkToFit(from, pieces[i]!);
      // Token counts of neighbouring pieces roughly add up: their sum guesses the last piece that
      // fits, and the search for the true one starts there.
      let guess = i;
      for (let acc = tokensOf(from, pieces[i]!.end); guess + 1 < pieces.length; guess++) {
        acc += tokensOf(pieces[guess + 1]!.start, pieces[guess + 1]!.end);
        if (acc > maxTokens) break;
      }
      const lo = lastTrue(i, pieces.length, guess, (j) => fits(from, pieces[j]!.end));
      const chunkEnd = pieces[lo]!.end;
      if (!isBlank(source, from, chunkEnd)) blocks.push({ start: from, end: chunkEnd, headingPath, whole: false });
      i = lo + 1;
      if (i >= pieces.length) break;
      const next = overlapTokens > 0 && !isBlank(source, from, chunkEnd) ? overlapStart(skipSpace(source, from), chunkEnd) : undefined;
      from = next ?? pieces[i]!.start;
    }
    return blocks;
  };

  const chunkSection = (section: Section, carriedStart: number): Block[] => {
    const start = Math.min(carriedStart, section.start);
    if (isBlank(source, start, section.end)) return [];
    if (fits(start, section.end)) return [{ start, end: section.end, headingPath: innermostPath(section), whole: true }];
    const introEnd = section.children[0]?.start ?? section.end;
    const blocks: Block[] = [];
    // A heading directly followed by a subheading has nothing of its own to say: it rides along
    // with the first subsection instead of becoming a chunk of one line.
    let carry = Number.POSITIVE_INFINITY;
    if (section.children.length > 0 && onlyHeadings(start, introEnd)) carry = start;
    else for (const block of splitRange(start, introEnd, section.path)) blocks.push(block);
    for (const child of section.children) {
      for (const block of chunkSection(child, carry)) blocks.push(block);
      carry = Number.POSITIVE_INFINITY;
    }
    return blocks;
  };

  const root = buildSections(source, headings);
  let blocks = chunkSection(root, root.start);
  if (mergeSections) blocks = mergeWholeBlocks(blocks, fits);

  return blocks
    .flatMap((block) => {
      const range = trimRange(source, block.start, block.end);
      if (range.start >= range.end) return [];
      const text = source.slice(range.start, range.end);
      return [{ index: 0, text, headingPath: block.headingPath, start: range.start, end: range.end, tokenCount: tokensOf(block.start, block.end) }];
    })
    .map((chunk, index) => ({ ...chunk, index }));
}

function buildSections(source: string, headings: MarkdownHeading[]): Section {
  const root: Section = { start: 0, end: source.length, level: 0, path: [], children: [] };
  const stack: Section[] = [root];
  for (const heading of headings) {
    while (stack.length > 1 && stack[stack.length - 1]!.level >= heading.level) stack.pop()!.end = heading.start;
    const parent = stack[stack.length - 1]!;
    const section: Section = { start: heading.start, end: source.length, level: heading.level, path: [...parent.path, heading.text], children: [] };
    parent.children.push(section);
    stack.push(section);
  }
  return root;
}

function mergeWholeBlocks(blocks: Block[], fits: (start: number, end: number) => boolean): Block[] {
  const merged: Block[] = [];
  for (const block of blocks) {
    const last = merged[merged.length - 1];
    if (last?.whole && block.whole && last.end === block.start && fits(last.start, block.end)) {
      merged[merged.length - 1] = { start: last.start, end: block.end, headingPath: commonPrefix(last.headingPath, block.headingPath), whole: true };
    } else {
      merged.push(block);
    }
  }
  return merged;
}

function commonPrefix(a: string[], b: string[]): string[] {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return a.slice(0, n);
}

/**
 * For `pred` true on [lo, e] and false on (e, hi), returns e (lo - 1 if pred is false throughout),
 * galloping out from `guess` so that a good guess costs about two calls.
 */
function lastTrue(lo: number, hi: number, guess: number, pred: (i: number) => boolean): number {
  if (hi <= lo) return lo - 1;
  let yes = lo - 1;
  let no = hi;
  const g = Math.min(Math.max(guess, lo), hi - 1);
  if (pred(g)) {
    yes = g;
    for (let step = 1; yes + step < hi; step *= 2) {
      if (!pred(yes + step)) {
        no = yes + step;
        break;
      }
      yes += step;
    }
  } else {
    no = g;
    for (let step = 1; no - step >= lo; step *= 2) {
      if (pred(no - step)) {
        yes = no - step;
        break;
      }
      no -= step;
    }
  }
  while (no - yes > 1) {
    const mid = (yes + no) >>> 1;
    if (pred(mid)) yes = mid;
    else no = mid;
  }
  return yes;
}

/** Smallest i in [0, n) with pred(i) true, for a pred that is false then true; n if none. */
function firstIndex(n: number, pred: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pred(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Offsets in (start, end) where a word begins; dictionary word starts where there are no spaces. */
function wordStarts(source: string, start: number, end: number): number[] {
  const text = source.slice(start, end);
  let cuts = whitespaceWordBoundaries(text);
  if (cuts.length === 0) cuts = unicodeWordBoundaries(text);
  return cuts.map((cut) => start + cut);
}

function isBlank(source: string, start: number, end: number): boolean {
  return skipSpace(source, start) >= end;
}

function skipSpace(source: string, at: number): number {
  while (at < source.length && isSpace(source.charCodeAt(at))) at++;
  return at;
}

function nonSpacePrefixCounts(source: string): Uint32Array {
  const counts = new Uint32Array(source.length + 1);
  for (let i = 0; i < source.length; i++) counts[i + 1] = counts[i]! + (isSpace(source.charCodeAt(i)) ? 0 : 1);
  return counts;
}

/** The characters String.prototype.trim and /\s/ treat as white space. */
function isSpace(code: number): boolean {
  return (
    (code >= 0x09 && code <= 0x0d) ||
    code === 0x20 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

function trimRange(source: string, start: number, end: number): Range {
  let s = start;
  let e = end;
  while (s < e && isSpace(source.charCodeAt(s))) s++;
  while (e > s && isSpace(source.charCodeAt(e - 1))) e--;
  return { start: s, end: e };
}
