import { type Analyzer, defaultAnalyzer } from '../../retrieval/bm25/analyzer.js';
import { splitSentenceSpans } from '../../text/sentence-split.js';
import type { MemoryQuote } from '../memory-types.js';

/** Quotation marks a model wraps a quote in, or writes straight where the user wrote them curly. */
const WRAPPING_QUOTES = /^["'“”‘’«»„]+|["'“”‘’«»„]+$/g;
const CURLY = new Map([
  ['‘', "'"],
  ['’', "'"],
  ['“', '"'],
  ['”', '"'],
]);

/**
 * Where a fact was drawn from in the user's messages, never trusting the model's word for it: the
 * quote it claims, found as written, else ignoring case, runs of whitespace and curly quotes; else
 * the sentence sharing the most terms with the fact. Offsets are into the message it was found in,
 * and `text` is that slice. Undefined when no sentence shares a term with the fact: a quote that
 * says nothing of it would be a false provenance.
 */
export function locateQuote(messages: readonly string[], fact: string, claimed?: string, analyzer: Analyzer = defaultAnalyzer): MemoryQuote | undefined {
  const candidates = claimed === undefined ? [] : [...new Set([claimed.trim(), claimed.trim().replace(WRAPPING_QUOTES, '').trim()])].filter((q) => q !== '');
  for (const quote of candidates) {
    for (const message of messages) {
      const start = message.indexOf(quote);
      if (start !== -1) return slice(message, start, start + quote.length);
    }
  }
  for (const quote of candidates) {
    for (const message of messages) {
      const found = looseIndexOf(message, quote);
      if (found) return slice(message, found.start, found.end);
    }
  }
  return bestSentence(messages, fact, analyzer);
}

const slice = (message: string, start: number, end: number): MemoryQuote => ({ text: message.slice(start, end), start, end });

/** The message folded (lower case, one space per run of whitespace, straight quotes), each folded unit mapped back to its source span. */
function fold(text: string): { folded: string; starts: number[]; ends: number[] } {
  // Units gathered in an array and joined once: a string grown a unit at a time and asked for its last unit is copied whole at each ask.
  const units: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let index = 0;
  for (const char of text) {
    const at = index;
    index += char.length;
    if (/\s/u.test(char)) {
      if (units.length > 0 && units.at(-1) !== ' ') {
        units.push(' ');
        starts.push(at);
        ends.push(index);
      }
      continue;
    }
    // Lower-casing may lengthen a character ("İ" is two units lowered): each unit maps to the whole of it.
    for (const unit of (CURLY.get(char) ?? char).toLowerCase()) {
      units.push(unit);
      for (let i = 0; i < unit.length; i++) {
        starts.push(at);
        ends.push(index);
      }
    }
  }
  return { folded: units.join(''), starts, ends };
}

function looseIndexOf(message: string, quote: string): { start: number; end: number } | undefined {
  const needle = fold(quote).folded.trimEnd();
  if (needle === '') return undefined;
  const { folded, starts, ends } = fold(message);
  const at = folded.indexOf(needle);
  if (at === -1) return undefined;
  return { start: starts[at]!, end: ends[at + needle.length - 1]! };
}

function bestSentence(messages: readonly string[], fact: string, analyzer: Analyzer): MemoryQuote | undefined {
  const factTerms = new Set(analyzer.analyze(fact));
  let best: { message: string; start: number; end: number; shared: number } | undefined;
  for (const message of messages) {
    for (const sentence of splitSentenceSpans(message)) {
      const terms = new Set(analyzer.analyze(sentence.text));
      let shared = 0;
      for (const term of factTerms) if (terms.has(term)) shared += 1;
      if (shared > (best?.shared ?? 0)) best = { message, start: sentence.start, end: sentence.end, shared };
    }
  }
  return best && slice(best.message, best.start, best.end);
}
