/**
 * The extractive answer as it was before issue 20 (shared stems counted, the cited chunk only,
 * ties to source order), kept so the bench measures old and new on the same recalled passages.
 */
import { stemmer } from 'stemmer';

const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have how i if in into is it its ' +
    'me my no not of on or our so than that the their them then there these they this to was we were what when ' +
    'where which who whom why will with would you your about tell know please'
  ).split(' '),
);

function terms(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return new Set(words.filter((w) => !STOPWORDS.has(w)).map((w) => stemmer(w)));
}

const split = (text: string) =>
  text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** The old answer's sentences, best first, from `texts` in retrieval order. */
export function legacySentences(query: string, texts: readonly string[], max = 3): string[] {
  const q = terms(query);
  const candidates: { sentence: string; overlap: number; order: number }[] = [];
  let order = 0;
  for (const text of texts) {
    for (const sentence of split(text)) {
      const s = terms(sentence);
      let overlap = 0;
      for (const t of q) if (s.has(t)) overlap++;
      if (overlap > 0) candidates.push({ sentence, overlap, order: order++ });
    }
  }
  candidates.sort((a, b) => b.overlap - a.overlap || a.order - b.order);
  return candidates.slice(0, max).map((c) => c.sentence);
}
