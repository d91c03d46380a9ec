import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AutoTokenizer, type PreTrainedTokenizer } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PairEncoder, longestFirst } from '../../../src/retrieval/rerank/pair-encoder.js';
import { writeTinyBertTokenizer } from '../../embeddings/support/tiny-bert-model.js';

describe('longestFirst', () => {
  it('keeps pairs that fit', () => {
    expect(longestFirst(3, 5, 10)).toEqual([3, 5]);
    expect(longestFirst(0, 10, 10)).toEqual([0, 10]);
  });

  it('cuts the longer side first, then both evenly', () => {
    expect(longestFirst(3, 50, 10)).toEqual([3, 7]);
    expect(longestFirst(50, 3, 10)).toEqual([7, 3]);
    expect(longestFirst(50, 60, 10)).toEqual([5, 5]);
    expect(longestFirst(50, 60, 11)).toEqual([6, 5]);
  });
});

describe('PairEncoder on the tiny BERT tokenizer', () => {
  let root: string;
  let tokenizer: PreTrainedTokenizer;
  const id = (token: string) => tokenizer.convert_tokens_to_ids(token);

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'memrag-pair-encoder-'));
    await writeTinyBertTokenizer(root, 12);
    tokenizer = await AutoTokenizer.from_pretrained(root, { local_files_only: true });
  });
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('lays a pair out as the tokenizer does, with segment ids', () => {
    const encoder = new PairEncoder(tokenizer, 12);
    expect(encoder.specialTokens).toBe(3);
    const pair = encoder.encode(encoder.tokenize('the cat'), encoder.tokenize('a dog ran'));
    const reference = tokenizer('the cat', { text_pair: 'a dog ran', return_tensor: false }) as unknown as { input_ids: number[]; token_type_ids: number[] };
    expect(pair.ids).toEqual(reference.input_ids);
    expect(pair.typeIds).toEqual(reference.token_type_ids);
    expect(pair.typeIds).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
  });

  it('truncates inside the pair, so it still ends with its separator', () => {
    const encoder = new PairEncoder(tokenizer, 12);
    const pair = encoder.encode(encoder.tokenize('cat'), encoder.tokenize('red blue green sun moon rain train book read'));
    expect(pair.ids).toHaveLength(12);
    expect(pair.ids[0]).toBe(id('[CLS]'));
    expect(pair.ids.slice(1, 3)).toEqual([id('cat'), id('[SEP]')]);
    // 12 - 3 special tokens - 1 query token leaves 8 of the 9 passage words: "read" is cut.
    expect(pair.ids.at(-2)).toBe(id('book'));
    expect(pair.ids.at(-1)).toBe(id('[SEP]'));
  });

  it('pads a batch on the right and masks the padding', () => {
    const encoder = new PairEncoder(tokenizer, 12);
    const query = encoder.tokenize('cat');
    const batch = encoder.batch([encoder.encode(query, encoder.tokenize('a dog')), encoder.encode(query, [])]);
    expect(batch.input_ids.dims).toEqual([2, 6]);
    expect(Array.from(batch.attention_mask.data as BigInt64Array, Number)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
    expect(Array.from(batch.input_ids.data as BigInt64Array, Number).slice(10)).toEqual([0, 0]);
    expect(Array.from(batch.token_type_ids!.data as BigInt64Array, Number)).toEqual([0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 0]);
  });

  it('refuses a limit that leaves no room for a pair', () => {
    expect(() => new PairEncoder(tokenizer, 4)).toThrow(RangeError);
  });
});
