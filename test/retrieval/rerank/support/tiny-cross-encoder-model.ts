import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  FLOAT,
  type Build,
  floatTensor,
  int64Tensor,
  intAttribute,
  node,
  onnxModel,
  tinyBertVocabulary,
  valueInfo,
  WORDS,
  writeTinyBertTokenizer,
} from '../../../embeddings/support/tiny-bert-model.js';

/**
 * Writes a tiny BERT-shaped sequence-classification cross-encoder (config.json, the tiny BERT
 * tokenizer, onnx/model.onnx) that transformers.js loads like a Hugging Face checkout.
 *
 * Graph: the relevance logit is the number of whole vocabulary words the query (segment 0) and
 * the passage (segment 1) share, counted with multiplicity (sum over words of the smaller count).
 * Special tokens, punctuation and the letter pieces out-of-vocabulary words are spelt with count
 * for nothing, so the ordering a test expects can be read off its texts. Two-label models emit
 * [-overlap, overlap] as [irrelevant, relevant].
 */
export const TINY_CROSS_ENCODER = {
  /** Large enough for a query and a sentence, small enough that truncation is easy to provoke. */
  maxLength: 24,
} as const;

export interface TinyCrossEncoderOptions {
  /** 1: a single relevance logit (ms-marco-MiniLM style); 2: [irrelevant, relevant]. Default 1. */
  labels?: 1 | 2;
  maxLength?: number;
}

/** Words of the tiny vocabulary that count toward the overlap: all its whole words. */
export const COUNTED_WORDS: ReadonlySet<string> = new Set(WORDS);

/** What the graph computes, for expectations: shared counted words, with multiplicity. */
export function expectedOverlap(query: string, passage: string): number {
  const counts = (text: string) => {
    const m = new Map<string, number>();
    for (const w of text.toLowerCase().split(/[^a-z0-9]+/)) if (COUNTED_WORDS.has(w)) m.set(w, (m.get(w) ?? 0) + 1);
    return m;
  };
  const q = counts(query);
  let overlap = 0;
  for (const [word, n] of counts(passage)) overlap += Math.min(n, q.get(word) ?? 0);
  return overlap;
}

export async function writeTinyCrossEncoderModel(dir: string, options: TinyCrossEncoderOptions = {}): Promise<string> {
  const labels = options.labels ?? 1;
  const maxLength = options.maxLength ?? TINY_CROSS_ENCODER.maxLength;
  const vocab = tinyBertVocabulary();
  await mkdir(path.join(dir, 'onnx'), { recursive: true });
  await writeFile(path.join(dir, 'config.json'), JSON.stringify(configJson(vocab.length, labels, maxLength), null, 2));
  await writeTinyBertTokenizer(dir, maxLength);
  await writeFile(path.join(dir, 'onnx', 'model.onnx'), modelOnnx(vocab, labels));
  return dir;
}

function configJson(vocabSize: number, labels: 1 | 2, maxLength: number) {
  const names = labels === 1 ? ['LABEL_0'] : ['LABEL_0', 'LABEL_1'];
  return {
    architectures: ['BertForSequenceClassification'],
    model_type: 'bert',
    hidden_size: 8,
    num_hidden_layers: 1,
    num_attention_heads: 1,
    intermediate_size: 8,
    max_position_embeddings: maxLength,
    type_vocab_size: 2,
    vocab_size: vocabSize,
    pad_token_id: 0,
    id2label: Object.fromEntries(names.map((n, i) => [String(i), n])),
    label2id: Object.fromEntries(names.map((n, i) => [n, i])),
  };
}

function modelOnnx(vocab: string[], labels: 1 | 2): Uint8Array {
  const v = vocab.length;
  const identity = new Float32Array(v * v);
  for (let i = 0; i < v; i++) identity[i * v + i] = 1;
  // Column per label: +1 per shared counted word for the relevance logit, -1 for "irrelevant".
  const head = new Float32Array(v * labels);
  vocab.forEach((token, i) => {
    if (!COUNTED_WORDS.has(token)) return;
    if (labels === 1) head[i] = 1;
    else {
      head[i * 2] = -1;
      head[i * 2 + 1] = 1;
    }
  });

  const initializers: Build[] = [
    floatTensor('one_hot_table', [v, v], identity),
    floatTensor('head', [v, labels], head),
    int64Tensor('last_axis', [1], [-1n]),
    int64Tensor('sequence_axis', [1], [1n]),
  ];
  const nodes: Build[] = [
    node('Gather', ['one_hot_table', 'input_ids'], ['one_hot']), // [b, s, v]
    node('Cast', ['attention_mask'], ['mask'], (w) => intAttribute(w, 'to', FLOAT)),
    node('Cast', ['token_type_ids'], ['types'], (w) => intAttribute(w, 'to', FLOAT)),
    node('Mul', ['types', 'mask'], ['in_passage']), // padding is type 0 but masked out anyway
    node('Sub', ['mask', 'in_passage'], ['in_query']),
    node('Unsqueeze', ['in_query', 'last_axis'], ['in_query_3d']),
    node('Unsqueeze', ['in_passage', 'last_axis'], ['in_passage_3d']),
    node('Mul', ['one_hot', 'in_query_3d'], ['query_one_hot']),
    node('Mul', ['one_hot', 'in_passage_3d'], ['passage_one_hot']),
    node('ReduceSum', ['query_one_hot', 'sequence_axis'], ['query_counts'], (w) => intAttribute(w, 'keepdims', 0)), // [b, v]
    node('ReduceSum', ['passage_one_hot', 'sequence_axis'], ['passage_counts'], (w) => intAttribute(w, 'keepdims', 0)),
    node('Min', ['query_counts', 'passage_counts'], ['shared_counts']),
    node('MatMul', ['shared_counts', 'head'], ['logits']), // [b, labels]
  ];
  return onnxModel('tiny_cross_encoder', nodes, initializers, [valueInfo('logits', FLOAT, ['batch', labels])]);
}
