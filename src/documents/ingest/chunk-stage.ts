import type { Analyzer } from '../../retrieval/bm25/analyzer.js';
import type { DocumentFormat } from '../parsers/document-format.js';
import { DEFAULT_PASSAGE_TOKENS } from '../passages.js';
import { type ChunkingOptions, type PreparedChunk, prepareChunks } from '../prepare-chunks.js';
import type { NormalisedDocument } from './normalise-stage.js';

export interface ChunkStageOptions {
  /** The embedder's window (`embedder.maxInputTokens`): no embedded text is longer. */
  maxInputTokens: number;
  analyzer: Analyzer;
  /** The embedder's tokenizer when it is available here; default the chunker's (high-erring) estimate. */
  countTokens?: (text: string) => number;
  chunking?: ChunkingOptions;
}

export interface ChunkedDocument<F extends string = DocumentFormat> extends NormalisedDocument<F> {
  /** The BM25 passage size the chunks were grouped with, stored so a later regrouping can tell. */
  passageTokens: number;
  /** In document order, each with its embedded text and BM25 passage. */
  chunks: PreparedChunk[];
}

/** Stage 3: the document cut into chunks for the embedder and grouped into BM25 passages. */
export function chunkStage<F extends string>(document: NormalisedDocument<F>, options: ChunkStageOptions): ChunkedDocument<F> {
  const chunks = prepareChunks({
    title: document.title,
    text: document.text,
    markup: document.markup,
    maxInputTokens: options.maxInputTokens,
    analyzer: options.analyzer,
    ...(options.chunking ? { options: options.chunking } : {}),
    ...(options.countTokens ? { countTokens: options.countTokens } : {}),
  });
  return { ...document, passageTokens: options.chunking?.passageTokens ?? DEFAULT_PASSAGE_TOKENS, chunks };
}
