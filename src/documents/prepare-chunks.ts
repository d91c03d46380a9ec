import type { Analyzer } from '../retrieval/bm25/analyzer.js';
import { type Chunk, chunkText } from './chunker.js';
import { approximateTokenCount } from '../text/approximate-token-count.js';
import { DEFAULT_PASSAGE_TOKENS, groupPassages } from './passages.js';

export interface ChunkingOptions {
  /** Tokens per chunk before the embedder's limit applies; default 256. */
  maxTokens?: number;
  /** Tokens repeated from a chunk's end at the next chunk's start; default an eighth of the chunk size. */
  overlapTokens?: number;
  /**
   * Tokens per BM25 passage: consecutive chunks of a document are indexed for BM25 together up to
   * this size (the title included); default 512. At or below the chunk size, every chunk is a
   * passage of its own.
   */
  passageTokens?: number;
}

export const DEFAULT_CHUNK_TOKENS = 256;

export interface PreparedChunk extends Chunk {
  /** Embedded in front of the chunk's text: the document title, or '' when it does not fit the window. */
  context: string;
  /** What the embedder sees: `context`, a blank line, `text`. */
  indexedText: string;
  /** Index of the first chunk of the chunk's BM25 passage. */
  passage: number;
  /** On a passage's first chunk only: the terms BM25 indexes for the whole passage. */
  passageTerms: PassageTerms | null;
}

export interface PassageTerms {
  /** The whole title, a blank line, and the source text from the passage's first chunk to its last. */
  text: string;
  termFrequencies: Map<string, number>;
  /** BM25 document length: the number of terms in `text`. */
  length: number;
}

export interface PrepareChunksInput {
  title: string;
  text: string;
  markup: 'markdown' | 'plain';
  /** The embedder's window (`embedder.maxInputTokens`): no indexed text is longer. */
  maxInputTokens: number;
  analyzer: Analyzer;
  options?: ChunkingOptions;
  /** The embedder's tokenizer when it is available here; default the (high-erring) estimate. */
  countTokens?: (text: string) => number;
}

/** The text embedded and indexed for a chunk. Kept in step with `textExpression` of the `chunks` vector table. */
export const indexedTextOf = (context: string, text: string): string => (context === '' ? text : `${context}\n\n${text}`);

/**
 * Chunks a document for indexing. The title goes in front of every chunk (it is what a chunk
 * from the middle of a document most lacks) when it takes at most a quarter of the window; the chunks are cut shorter by that much, so `context + text` never
 * exceeds the embedder's input limit. The chunks are then grouped into BM25 passages, each with
 * the whole title in front: BM25 has no window, and a long title is what it most often matches.
 */
export function prepareChunks(input: PrepareChunksInput): PreparedChunk[] {
  const countTokens = input.countTokens ?? approximateTokenCount;
  const { chunks, context } = chunkForEmbedder(input, countTokens);
  const passages = preparePassages({
    chunks,
    source: input.text,
    title: input.title,
    passageTokens: input.options?.passageTokens,
    countTokens,
    analyzer: input.analyzer,
  });
  return chunks.map((chunk, i) => ({ ...chunk, context, indexedText: indexedTextOf(context, chunk.text), ...passages[i]! }));
}

export interface PreparePassagesInput {
  /** A document's chunks, in order, with offsets into `source`. */
  chunks: readonly Chunk[];
  source: string;
  /** The document's title, indexed in front of every passage (white space collapsed). */
  title: string;
  /** Default `DEFAULT_PASSAGE_TOKENS`. */
  passageTokens?: number;
  countTokens: (text: string) => number;
  analyzer: Analyzer;
}

/** Each chunk's BM25 passage, and on each passage's first chunk the passage's terms. */
export function preparePassages(input: PreparePassagesInput): Pick<PreparedChunk, 'passage' | 'passageTerms'>[] {
  const { chunks, source, countTokens } = input;
  const title = collapseSpace(input.title);
  const passages = groupPassages({
    chunks,
    source,
    maxTokens: input.passageTokens ?? DEFAULT_PASSAGE_TOKENS,
    countTokens,
    contextTokens: title === '' ? 0 : countTokens(title) + 1,
  });
  const out: Pick<PreparedChunk, 'passage' | 'passageTerms'>[] = [];
  for (const p of passages) {
    const text = indexedTextOf(title, source.slice(p.start, p.end));
    const termFrequencies = input.analyzer.termFrequencies(text);
    let length = 0;
    for (const tf of termFrequencies.values()) length += tf;
    for (let i = p.first; i <= p.last; i++) out.push({ passage: p.first, passageTerms: i === p.first ? { text, termFrequencies, length } : null });
  }
  return out;
}

/**
 * Chunkings tried with the title in front, each with less room after an overflow; past them the
 * title goes, and the chunks alone are within the limit.
 */
const MAX_TITLED_CHUNKINGS = 4;

function chunkForEmbedder(input: PrepareChunksInput, countTokens: (text: string) => number): { chunks: Chunk[]; context: string } {
  const limit = Math.floor(input.maxInputTokens);
  if (!(limit >= 2)) throw new RangeError(`the embedder's input limit must be at least 2 tokens, got ${input.maxInputTokens}`);
  const title = collapseSpace(input.title);
  // One token more for the blank line between title and chunk.
  const titleTokens = title === '' ? 0 : countTokens(title) + 1;
  const context = titleTokens > 0 && titleTokens <= limit / 4 ? title : '';
  const chunkWithin = (room: number) => {
    const maxTokens = Math.max(1, Math.min(input.options?.maxTokens ?? DEFAULT_CHUNK_TOKENS, room));
    const overlapTokens = Math.min(input.options?.overlapTokens ?? Math.floor(maxTokens / 8), maxTokens - 1);
    return chunkText(input.text, { maxTokens, overlapTokens, markup: input.markup, countTokens });
  };
  if (context !== '') {
    let room = limit - titleTokens;
    for (let attempt = 1; attempt <= MAX_TITLED_CHUNKINGS && room >= 1; attempt++) {
      const chunks = chunkWithin(room);
      // Subword tokens are not additive: a title and a chunk joined can take a token or two more
      // than apart. Measured on the joined text, and cut again with less room when it overflows.
      const overflow = Math.max(...chunks.map((c) => countTokens(indexedTextOf(context, c.text)) - limit));
      if (overflow <= 0) return { chunks, context };
      room -= overflow;
    }
  }
  return { chunks: chunkWithin(limit), context: '' };
}

const collapseSpace = (text: string): string => text.replace(/\s+/g, ' ').trim();
