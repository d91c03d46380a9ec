import type { Chunk } from './chunker.js';

/**
 * Default size of a BM25 passage, in the embedder's tokens. Only the embedder has a window
 * (128 tokens for the bundled model); BM25 does not, and on SciFact it ranks abstracts far
 * better as a whole than by their best 128-token chunk (nDCG@10 0.697 at 512-token passages,
 * 0.698 on whole abstracts, 0.669 on chunks with the whole title in front of each:
 * `npm run bench:passages`). 512 holds most abstracts whole and is still a passage, not a book,
 * for long documents.
 */
export const DEFAULT_PASSAGE_TOKENS = 512;

/** Consecutive chunks of one document that BM25 indexes and scores as one text. */
export interface Passage {
  /** Index of the passage's first and last chunk. */
  first: number;
  last: number;
  /** The source text the passage covers: from its first chunk's start to its last chunk's end. */
  start: number;
  end: number;
}

export interface GroupPassagesInput {
  /** The document's chunks, in order. */
  chunks: readonly Chunk[];
  /** The document text the chunks' offsets point into. */
  source: string;
  /** Tokens a passage may take, `context` included; a chunk longer than that is a passage alone. */
  maxTokens: number;
  countTokens: (text: string) => number;
  /** What is indexed in front of the passage's text (the title), counted against `maxTokens`. */
  contextTokens?: number;
}

/**
 * Groups consecutive chunks into passages of at most `maxTokens`, greedily from the first chunk.
 * A passage covers its chunks' source range once, so the overlap between neighbouring chunks is
 * not counted twice by BM25.
 */
export function groupPassages(input: GroupPassagesInput): Passage[] {
  const { chunks, source, maxTokens, countTokens } = input;
  const room = maxTokens - (input.contextTokens ?? 0);
  const passages: Passage[] = [];
  let i = 0;
  while (i < chunks.length) {
    const first = chunks[i]!;
    let last = i;
    // The chunks' own counts, overlap included, bound the joined count from above (give or take
    // a token where they join), so the exact count is only needed near the limit.
    let upperBound = first.tokenCount;
    while (last + 1 < chunks.length) {
      const next = chunks[last + 1]!;
      upperBound += next.tokenCount + 1;
      if (upperBound > room && countTokens(source.slice(first.start, next.end)) > room) break;
      last++;
    }
    passages.push({ first: i, last, start: first.start, end: chunks[last]!.end });
    i = last + 1;
  }
  return passages;
}
