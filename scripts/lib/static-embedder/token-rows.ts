import type { UseLiteTokenizer } from '../../../src/embeddings/use-lite-tokenizer.js';

/** Sentences as sparse rows over the vocabulary (CSR): each row's token ids and their share of its weighted mean. */
export interface TokenRows {
  offsets: Int32Array;
  ids: Int32Array;
  /** a[s][t] = weight(t) · count(t in s) / Σ weight · count: each row sums to 1 (or is empty). */
  shares: Float64Array;
}

/** Token ids of each sentence, as the runtime reads them (the first `maxInputTokens`). */
export function tokenizeAll(tokenizer: UseLiteTokenizer, sentences: string[], maxInputTokens: number): Int32Array[] {
  return sentences.map((s) => Int32Array.from(tokenizer.encode(s).slice(0, maxInputTokens)));
}

/**
 * Smooth inverse frequency (Arora et al. 2017): weight(t) = a / (a + p(t)), p the token's share of
 * all tokens of the training sentences. Frequent pieces (▁the, ▁of, punctuation) count little in a
 * mean; tokens never seen get 1. Ids below `firstId` (<unk>, <s>, reserved) get 0: never counted.
 */
export function sifWeights(tokenLists: Int32Array[], vocabularySize: number, a: number, firstId: number): { weights: Float64Array; counts: Float64Array } {
  const counts = new Float64Array(vocabularySize);
  let total = 0;
  for (const tokens of tokenLists) for (const id of tokens) if (id < vocabularySize) (counts[id]! += 1), (total += 1);
  const weights = new Float64Array(vocabularySize);
  for (let id = firstId; id < vocabularySize; id++) weights[id] = a / (a + (total > 0 ? counts[id]! / total : 0));
  return { weights, counts };
}

export function buildTokenRows(tokenLists: Int32Array[], weights: Float64Array): TokenRows {
  const offsets = new Int32Array(tokenLists.length + 1);
  const ids: number[] = [];
  const shares: number[] = [];
  tokenLists.forEach((tokens, s) => {
    const row = new Map<number, number>();
    for (const id of tokens) if (weights[id]! > 0) row.set(id, (row.get(id) ?? 0) + weights[id]!);
    let sum = 0;
    for (const w of row.values()) sum += w;
    for (const [id, w] of [...row].sort((x, y) => x[0] - y[0])) ids.push(id), shares.push(w / sum);
    offsets[s + 1] = ids.length;
  });
  return { offsets, ids: Int32Array.from(ids), shares: Float64Array.from(shares) };
}
