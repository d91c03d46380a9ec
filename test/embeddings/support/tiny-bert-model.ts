import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ProtobufWriter } from './protobuf-writer.js';
import { seededRandom } from '../../../testkit/vector-fixtures.js';

/**
 * Writes a tiny BERT-shaped feature-extraction model folder (config.json, tokenizer.json,
 * tokenizer_config.json, onnx/model.onnx) that transformers.js loads like a Hugging Face
 * checkout. The hub is unreachable from here, so this stands in for a real model.
 *
 * Graph: last_hidden_state = tanh((word_emb[input_ids] + type_emb[token_type_ids]) @ W) * mask,
 * small but with real arithmetic, so identical texts agree and different texts differ.
 */
export const TINY_BERT = {
  hiddenSize: 24,
  /** Deliberately small so that truncation is observable with a one-line text. */
  maxLength: 16,
} as const;

const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] as const;
/** The whole words of the vocabulary; anything else is spelt with letter pieces. */
export const WORDS: readonly string[] = [
  'the',
  'a',
  'of',
  'and',
  'to',
  'in',
  'is',
  'on',
  'with',
  'for',
  'cat',
  'dog',
  'sat',
  'mat',
  'ran',
  'park',
  'memory',
  'vector',
  'search',
  'model',
  'database',
  'query',
  'fast',
  'slow',
  'red',
  'blue',
  'green',
  'sun',
  'moon',
  'rain',
  'train',
  'book',
  'read',
  'write',
  'code',
  'test',
  'embed',
  'text',
  'word',
  'sentence',
  'river',
  'bank',
  'money',
  'loan',
  'tree',
];
const LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789'.split('');
const PUNCTUATION = ['.', ',', '!', '?', "'", '-', ':', ';'];

export function tinyBertVocabulary(): string[] {
  return [
    ...SPECIAL_TOKENS,
    ...PUNCTUATION,
    ...WORDS,
    ...LETTERS,
    // Continuation pieces let WordPiece spell out any lower-case word instead of emitting [UNK].
    ...LETTERS.map((l) => `##${l}`),
    '##s',
    '##ing',
    '##ed',
  ].filter((t, i, all) => all.indexOf(t) === i);
}

/** Writes the model folder into `dir` (created if missing) and returns `dir`. */
export async function writeTinyBertModel(dir: string): Promise<string> {
  const vocab = tinyBertVocabulary();
  await mkdir(path.join(dir, 'onnx'), { recursive: true });
  await writeFile(path.join(dir, 'config.json'), JSON.stringify(configJson(vocab.length), null, 2));
  await writeTinyBertTokenizer(dir);
  await writeFile(path.join(dir, 'onnx', 'model.onnx'), modelOnnx(vocab.length));
  return dir;
}

/** tokenizer.json and tokenizer_config.json of the tiny vocabulary, for other tiny BERT-shaped models. */
export async function writeTinyBertTokenizer(dir: string, maxLength: number = TINY_BERT.maxLength): Promise<void> {
  const vocab = tinyBertVocabulary();
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson(vocab), null, 2));
  await writeFile(path.join(dir, 'tokenizer_config.json'), JSON.stringify(tokenizerConfigJson(maxLength), null, 2));
}

function configJson(vocabSize: number) {
  return {
    architectures: ['BertModel'],
    model_type: 'bert',
    hidden_size: TINY_BERT.hiddenSize,
    num_hidden_layers: 1,
    num_attention_heads: 1,
    intermediate_size: TINY_BERT.hiddenSize,
    max_position_embeddings: TINY_BERT.maxLength,
    type_vocab_size: 2,
    vocab_size: vocabSize,
    pad_token_id: 0,
  };
}

function tokenizerConfigJson(maxLength: number) {
  return {
    tokenizer_class: 'BertTokenizer',
    do_lower_case: true,
    model_max_length: maxLength,
    cls_token: '[CLS]',
    sep_token: '[SEP]',
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    mask_token: '[MASK]',
  };
}

function tokenizerJson(vocab: string[]) {
  const ids = Object.fromEntries(vocab.map((t, i) => [t, i]));
  const special = (content: string) => ({
    id: ids[content],
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map(special),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: ids,
    },
  };
}

// Field numbers and enum values from onnx/onnx.proto.
export const FLOAT = 1;
export const INT64 = 7;
const ATTRIBUTE_INT = 2;

function modelOnnx(vocabSize: number): Uint8Array {
  const d = TINY_BERT.hiddenSize;
  const random = seededRandom(20240611);
  const weights = (n: number, scale: number) => Float32Array.from({ length: n }, () => (random() * 2 - 1) * scale);

  const initializers = [
    floatTensor('word_embeddings', [vocabSize, d], weights(vocabSize * d, 1)),
    floatTensor('token_type_embeddings', [2, d], weights(2 * d, 0.1)),
    floatTensor('dense_weight', [d, d], weights(d * d, 1 / Math.sqrt(d))),
    int64Tensor('last_axis', [1], [-1n]),
  ];
  const nodes = [
    node('Gather', ['word_embeddings', 'input_ids'], ['word_vectors']),
    node('Gather', ['token_type_embeddings', 'token_type_ids'], ['type_vectors']),
    node('Add', ['word_vectors', 'type_vectors'], ['summed']),
    node('MatMul', ['summed', 'dense_weight'], ['projected']),
    node('Tanh', ['projected'], ['activated']),
    node('Cast', ['attention_mask'], ['mask_float'], (w) => intAttribute(w, 'to', FLOAT)),
    node('Unsqueeze', ['mask_float', 'last_axis'], ['mask_3d']),
    node('Mul', ['activated', 'mask_3d'], ['last_hidden_state']),
  ];

  return onnxModel('tiny_bert', nodes, initializers, [valueInfo('last_hidden_state', FLOAT, ['batch', 'sequence', d])]);
}

/** A ModelProto (opset 17) taking BERT's three [batch, sequence] int64 inputs. */
export function onnxModel(graphName: string, nodes: Build[], initializers: Build[], outputs: Build[]): Uint8Array {
  return new ProtobufWriter()
    .varint(1, 8) // ir_version
    .string(2, 'memrag-test')
    .message(7, (graph) => {
      for (const n of nodes) graph.message(1, n);
      graph.string(2, graphName);
      for (const t of initializers) graph.message(5, t);
      for (const name of ['input_ids', 'attention_mask', 'token_type_ids']) {
        graph.message(11, valueInfo(name, INT64, ['batch', 'sequence']));
      }
      for (const o of outputs) graph.message(12, o);
    })
    .message(8, (opset) => opset.string(1, '').varint(2, 17))
    .finish();
}

export type Build = (writer: ProtobufWriter) => void;

export function node(opType: string, inputs: string[], outputs: string[], attributes?: Build): Build {
  return (w) => {
    for (const i of inputs) w.string(1, i);
    for (const o of outputs) w.string(2, o);
    w.string(3, `${opType}_${outputs[0]}`);
    w.string(4, opType);
    if (attributes) attributes(w);
  };
}

export function intAttribute(w: ProtobufWriter, name: string, value: number): void {
  w.message(5, (a) => a.string(1, name).varint(3, value).varint(20, ATTRIBUTE_INT));
}

export function floatTensor(name: string, dims: number[], data: Float32Array): Build {
  return (w) => {
    w.packedVarints(1, dims).varint(2, FLOAT).string(8, name);
    w.bytes(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  };
}

export function int64Tensor(name: string, dims: number[], data: bigint[]): Build {
  return (w) => {
    const raw = BigInt64Array.from(data);
    w.packedVarints(1, dims).varint(2, INT64).string(8, name);
    w.bytes(9, new Uint8Array(raw.buffer));
  };
}

export function valueInfo(name: string, elemType: number, shape: (string | number)[]): Build {
  return (w) => {
    w.string(1, name);
    w.message(2, (type) =>
      type.message(1, (tensor) => {
        tensor.varint(1, elemType);
        tensor.message(2, (s) => {
          for (const dim of shape) s.message(1, (dm) => (typeof dim === 'number' ? dm.varint(1, dim) : dm.string(2, dim)));
        });
      }),
    );
  };
}
