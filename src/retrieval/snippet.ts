import type { Analyzer } from './bm25/analyzer.js';

const WORD = /[\p{L}\p{M}\p{N}]+(?:[-'\u2019._][\p{L}\p{M}\p{N}]+)*/gu;

/**
 * A window of at most `maxChars` of `text` around the first word whose terms are among the query's
 * (as the analyzer makes them, so "infections" finds "infection"), cut at word boundaries, with `…`
 * where text was left out. Without any match, the start of the text.
 */
export function makeSnippet(text: string, queryTerms: ReadonlySet<string>, analyzer: Analyzer, maxChars = 240): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= maxChars) return flat;
  let at = 0;
  if (queryTerms.size > 0) {
    for (const match of flat.matchAll(WORD)) {
      if (analyzer.analyze(match[0]).some((term) => queryTerms.has(term))) {
        at = match.index;
        break;
      }
    }
  }
  // A little context before the match, the rest after it.
  let start = Math.max(0, Math.min(at - Math.floor(maxChars / 4), flat.length - maxChars));
  let end = Math.min(flat.length, start + maxChars);
  if (start > 0) {
    const space = flat.indexOf(' ', start);
    if (space >= 0 && space < at) start = space + 1;
  }
  if (end < flat.length) {
    const space = flat.lastIndexOf(' ', end);
    if (space > start) end = space;
  }
  return `${start > 0 ? '…' : ''}${flat.slice(start, end)}${end < flat.length ? '…' : ''}`;
}
