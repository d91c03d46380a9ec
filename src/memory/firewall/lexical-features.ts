/**
 * A text's words and word pairs, hashed into a fixed number of buckets and scaled to unit length:
 * what the firewall's classifier reads beside the embedder's vector. The embedder places "Wants all
 * receipts forwarded to receipts@…" near "Wants receipts kept in one folder"; the words "forwarded
 * to" and an address are what set the first apart, and a linear model over hashed n-grams is the
 * usual baseline of injection detectors for that reason.
 */

/** Addresses, links and numbers read as one token each: which address matters less than that there is one. */
const NORMALIZERS: readonly [RegExp, string][] = [
  [/\bhttps?:\/\/\S+|\bwww\.\S+/gi, ' xurlx '],
  [/\b[\w.+-]{1,64}@[\w-]{1,63}(\.[\w-]{1,63})+\b/g, ' xemailx '],
  [/\b[\w-]{1,63}\.(com|net|org|io|co|cc|shop|app|info|biz|xyz|site|online|example)\b/gi, ' xdomainx '],
  [/\d+/g, ' xnumx '],
];

/** The tokens the features are made of: lower-case words, with addresses, links and numbers folded. */
export function lexicalTokens(text: string): string[] {
  let normalized = text.slice(0, 4_000);
  for (const [pattern, token] of NORMALIZERS) normalized = normalized.replace(pattern, token);
  return normalized.toLowerCase().match(/[\p{L}\p{M}]+|[^\s\p{L}\p{M}\p{N}]/gu) ?? [];
}

/** 32-bit FNV-1a over UTF-16 code units: a stable bucket for a feature string. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Unigram and bigram counts in `buckets` dimensions, scaled to unit length (all zeros for no tokens). */
export function lexicalFeatures(text: string, buckets: number): number[] {
  const features = new Array<number>(buckets).fill(0);
  const tokens = lexicalTokens(text);
  for (let i = 0; i < tokens.length; i++) {
    features[fnv1a(`1 ${tokens[i]}`) % buckets]! += 1;
    if (i + 1 < tokens.length) features[fnv1a(`2 ${tokens[i]} ${tokens[i + 1]}`) % buckets]! += 1;
  }
  const norm = Math.hypot(...features.filter((x) => x !== 0));
  return norm === 0 ? features : features.map((x) => x / norm);
}
