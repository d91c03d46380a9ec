import { stemmer } from 'stemmer';

/**
 * Words that say what kind of answer is wanted, or hold the question together, rather than what it
 * is about: a sentence sharing "year" or "many" with the question is no closer to answering it.
 */
const STOPWORDS = new Set(
  (
    'a an and are as at be been being but by can could did do does doing done for from had has have having how i if in into ' +
    'should shall may might must ' +
    'is it its me my no not of on or our so than that the their them then there these they this those to was we were what ' +
    'when where which who whom whose why will with would you your about tell know please also any some such only other ' +
    'year years name kind kinds type types sort many much'
  ).split(' '),
);

/** "Café" and "cafe" are one word to a reader; an accent must not decide a match. */
export function foldAccents(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '');
}

/** Content words of a text, folded, lower-cased and stemmed ("drinks", "drinking" → "drink"), in order. */
export function contentTerms(text: string): string[] {
  const words = foldAccents(text).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  // The stem too: "named" is as much glue as "name".
  return words.flatMap((w) => {
    if (STOPWORDS.has(w)) return [];
    const stem = stemmer(w);
    return STOPWORDS.has(stem) ? [] : [stem];
  });
}

export function queryTerms(text: string): Set<string> {
  return new Set(contentTerms(text));
}
