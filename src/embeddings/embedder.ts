/**
 * Turns texts into vectors of one fixed space. `id` names the space: two embedders with the
 * same id must produce comparable vectors, so the store refuses to mix ids.
 */
export interface EmbedOptions {
  signal?: AbortSignal;
  /**
   * A reader waits for these vectors (a search's query): an embedder that queues work computes
   * them ahead of the rest (writes' contents, ingestion). Others ignore it.
   */
  urgent?: boolean;
  /**
   * Texts of a bulk write (an import's turns): an embedder that keeps some of its workers idle
   * starts them for these. Others ignore it.
   */
  bulk?: boolean;
}

export interface Embedder {
  /** Stable identity of the vector space, e.g. `bundled:use-lite` or `transformers:Xenova/all-MiniLM-L6-v2`. */
  readonly id: string;
  readonly dimensions: number;
  /** Input limit in tokens: text past it is dropped by the model (silently, for most). */
  readonly maxInputTokens: number;
  /**
   * Tokens the model sees for a text, counted in the calling thread; absent when the tokenizer is
   * not at hand here. Chunking uses it to keep every chunk within `maxInputTokens`.
   */
  countTokens?(text: string): number;
  /**
   * False once it can no longer embed (a pool whose workers keep failing to start has given up);
   * absent when it cannot tell. Wrappers pass it through, so that a readiness probe sees it.
   */
  alive?(): boolean;
  /** Embeds in order; the result has one unit-length vector per input text. */
  embed(texts: string[], options?: EmbedOptions): Promise<number[][]>;
  close(): Promise<void>;
}
