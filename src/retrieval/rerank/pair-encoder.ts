import { type PreTrainedTokenizer, Tensor } from '@huggingface/transformers';

/** One (query, passage) pair as the model reads it: special tokens in place, within the limit. */
export interface EncodedPair {
  ids: number[];
  typeIds: number[];
}

/** What a sequence-classification model takes; token_type_ids only for tokenizers that make them. */
export interface PairBatch {
  input_ids: Tensor;
  attention_mask: Tensor;
  token_type_ids?: Tensor;
}

/**
 * Tokenises (query, passage) pairs the way Hugging Face's cross-encoders are trained on:
 * `longest_first` truncation to the model's limit, applied before the special tokens are added,
 * so a cut pair still ends in its closing separator. transformers.js's own pair call truncates
 * after them, dropping the closing separator and, with a long query, the passage altogether.
 * The template comes from the tokenizer's own post-processor (BERT, RoBERTa/XLM-R, templates).
 */
export class PairEncoder {
  private readonly inner: PreTrainedTokenizer['_tokenizer'];
  private readonly addedTokenIds: Map<string, number>;
  /** Tokens the template adds around a pair ([CLS] a [SEP] b [SEP] → 3). */
  readonly specialTokens: number;
  /** Tokens left for query and passage together. */
  private readonly budget: number;

  constructor(
    private readonly tokenizer: PreTrainedTokenizer,
    readonly maxLength: number,
  ) {
    this.inner = tokenizer._tokenizer;
    this.addedTokenIds = new Map([...this.inner.get_added_tokens_decoder()].map(([id, token]) => [token.content, id]));
    this.specialTokens = this.withSpecialTokens([], []).ids.length;
    this.budget = maxLength - this.specialTokens;
    // A query and a passage need a token each at least, or every pair scores the same.
    if (this.budget < 2) throw new RangeError(`maxLength ${maxLength} leaves no room for a pair beside ${this.specialTokens} special tokens`);
  }

  /** Word pieces without special tokens; tokenise a query once and pair it with every passage. */
  tokenize(text: string): string[] {
    return this.inner.tokenize(text, { add_special_tokens: false });
  }

  encode(queryTokens: readonly string[], passageTokens: readonly string[]): EncodedPair {
    const [queryLength, passageLength] = longestFirst(queryTokens.length, passageTokens.length, this.budget);
    return this.withSpecialTokens(queryTokens.slice(0, queryLength), passageTokens.slice(0, passageLength));
  }

  /** Right-padded tensors of a batch of pairs. */
  batch(pairs: readonly EncodedPair[]): PairBatch {
    if (pairs.length === 0) throw new RangeError('cannot batch zero pairs');
    const width = Math.max(...pairs.map((p) => p.ids.length));
    const ids = new BigInt64Array(pairs.length * width).fill(BigInt(this.tokenizer.pad_token_id ?? 0));
    const mask = new BigInt64Array(pairs.length * width);
    const types = new BigInt64Array(pairs.length * width);
    pairs.forEach((pair, row) => {
      const offset = row * width;
      pair.ids.forEach((id, i) => {
        ids[offset + i] = BigInt(id);
        mask[offset + i] = 1n;
        types[offset + i] = BigInt(pair.typeIds[i] ?? 0);
      });
    });
    const dims = [pairs.length, width];
    return {
      input_ids: new Tensor('int64', ids, dims),
      attention_mask: new Tensor('int64', mask, dims),
      // RoBERTa-style templates mark the passage as type 1, which XLM-R (one type embedding)
      // must not see; the tokenizer class says whether the model was trained with segment ids.
      ...(this.tokenizer.return_token_type_ids ? { token_type_ids: new Tensor('int64', types, dims) } : {}),
    };
  }

  private withSpecialTokens(query: string[], passage: string[]): EncodedPair {
    const processor = this.inner.post_processor;
    let tokens: string[];
    let typeIds: number[] | undefined;
    if (processor) {
      // Processors that only rewrite (ByteLevel) hand the pair back unmerged.
      const out = processor(query, passage, true) as { tokens: string[]; tokens_pair?: string[]; token_type_ids?: number[] };
      tokens = out.tokens_pair ? [...out.tokens, ...out.tokens_pair] : out.tokens;
      typeIds = out.tokens_pair ? undefined : out.token_type_ids;
    } else {
      tokens = [...query, ...passage];
    }
    const unknown = this.tokenizer.unk_token_id;
    const ids = tokens.map((t) => this.addedTokenIds.get(t) ?? this.inner.token_to_id(t) ?? unknown);
    return { ids, typeIds: typeIds ?? new Array<number>(ids.length).fill(0) };
  }
}

/**
 * Hugging Face's `longest_first`: tokens come off the longer side until both fit, so a long
 * query cannot push the passage out, nor a long passage the query.
 */
export function longestFirst(queryLength: number, passageLength: number, budget: number): [number, number] {
  if (queryLength + passageLength <= budget) return [queryLength, passageLength];
  const half = Math.floor(budget / 2);
  if (queryLength <= half) return [queryLength, budget - queryLength];
  if (passageLength <= budget - half) return [budget - passageLength, passageLength];
  return [budget - half, half];
}
