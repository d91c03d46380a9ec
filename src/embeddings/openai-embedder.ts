import OpenAI from 'openai';
import type { Embedder } from './embedder.js';
import { l2Normalize } from './l2-normalize.js';
import { splitIntoBatches } from './split-into-batches.js';

export interface OpenAiEmbedderOptions {
  /** e.g. `text-embedding-3-small`, or whatever model the compatible server serves. */
  model: string;
  /** Base URL up to and including `/v1`; default the OpenAI API. */
  baseURL?: string;
  apiKey?: string;
  /**
   * Requested output width (the `dimensions` request parameter, honoured by text-embedding-3-*).
   * When unset nothing is sent and the width is learnt from a probe call.
   */
  dimensions?: number;
  /** Texts per request (the API takes up to 2048). Default 64. */
  batchSize?: number;
  /** Input limit in tokens. Default 8191, the limit of OpenAI's embedding models. */
  maxInputTokens?: number;
  /** Per-request timeout; default 60 s. */
  timeoutMs?: number;
  /** Retries of 408/409/429/5xx and connection errors, with backoff. Default 2. */
  maxRetries?: number;
  /** A ready client (tests, custom fetch); baseURL/apiKey/timeoutMs/maxRetries are then ignored. */
  client?: OpenAI;
}

export const OPENAI_DEFAULT_MAX_INPUT_TOKENS = 8191;

/** Embeddings from an OpenAI-compatible `/embeddings` endpoint. */
export class OpenAiEmbedder implements Embedder {
  readonly id: string;
  private closed = false;

  private constructor(
    private readonly client: OpenAI,
    private readonly model: string,
    readonly dimensions: number,
    private readonly requestDimensions: number | undefined,
    readonly maxInputTokens: number,
    private readonly batchSize: number,
  ) {
    this.id = `openai:${model}`;
  }

  static async create(options: OpenAiEmbedderOptions): Promise<OpenAiEmbedder> {
    const client =
      options.client ??
      new OpenAI({
        baseURL: options.baseURL,
        // Self-hosted compatible servers usually need no key, but the client refuses to start
        // without one; against api.openai.com the missing key still surfaces as the client's error.
        apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? (options.baseURL ? 'unused' : undefined),
        timeout: options.timeoutMs ?? 60_000,
        maxRetries: options.maxRetries ?? 2,
      });
    const maxInputTokens = options.maxInputTokens ?? OPENAI_DEFAULT_MAX_INPUT_TOKENS;
    const batchSize = options.batchSize ?? 64;
    if (options.dimensions !== undefined) {
      return new OpenAiEmbedder(client, options.model, options.dimensions, options.dimensions, maxInputTokens, batchSize);
    }
    const probe = new OpenAiEmbedder(client, options.model, 0, undefined, maxInputTokens, batchSize);
    const [vector] = await probe.request(['dimension probe']);
    return new OpenAiEmbedder(client, options.model, vector!.length, undefined, maxInputTokens, batchSize);
  }

  async embed(texts: string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    if (this.closed) throw new Error('OpenAiEmbedder is closed');
    const vectors: number[][] = [];
    for (const batch of splitIntoBatches(texts, this.batchSize)) {
      options.signal?.throwIfAborted();
      const batchVectors = await this.request(batch, options.signal);
      for (const v of batchVectors) {
        if (v.length !== this.dimensions) {
          throw new Error(`${this.id} returned a ${v.length}-dimensional vector; expected ${this.dimensions}`);
        }
      }
      vectors.push(...batchVectors);
    }
    return vectors;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private async request(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const response = await this.client.embeddings.create(
      {
        model: this.model,
        // The API rejects empty strings; a lone space embeds as "nothing" without failing the batch.
        input: texts.map((t) => (t.length > 0 ? t : ' ')),
        // The client otherwise asks for base64 and decodes it blindly, which breaks on compatible
        // servers that ignore encoding_format and send plain arrays.
        encoding_format: 'float',
        ...(this.requestDimensions !== undefined ? { dimensions: this.requestDimensions } : {}),
      },
      { signal },
    );
    // Servers may answer out of order; `index` is authoritative.
    const byIndex = new Array<number[] | undefined>(texts.length);
    for (const item of response.data) {
      if (!Number.isInteger(item.index) || item.index < 0 || item.index >= texts.length || byIndex[item.index]) {
        throw new Error(`${this.id}: response has an unexpected or duplicate index ${item.index}`);
      }
      byIndex[item.index] = l2Normalize(item.embedding);
    }
    // biome-ignore lint/complexity/useIndexOf: indexOf skips the holes of a sparse array, the very slots missing here.
    const missing = byIndex.findIndex((v) => v === undefined);
    if (missing !== -1 || response.data.length !== texts.length) {
      throw new Error(`${this.id}: response has ${response.data.length} embeddings for ${texts.length} inputs`);
    }
    return byIndex as number[][];
  }
}

export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Promise<OpenAiEmbedder> {
  return OpenAiEmbedder.create(options);
}
