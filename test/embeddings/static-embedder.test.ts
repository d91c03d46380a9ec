import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import { STATIC_CHARACTERS_PER_TOKEN, StaticEmbedder } from '../../src/embeddings/static-embedder.js';
import { StaticModelUnavailableError } from '../../src/embeddings/static-model-files.js';
import { STATIC_MODEL_FILES } from '../../src/embeddings/static-model-format.js';
import { UseLiteTokenizer } from '../../src/embeddings/use-lite-tokenizer.js';

/**
 * The fixture (test/fixtures/static-embedder) is written by hand, float16, 4 dimensions:
 * ▁the (id 9) [0, 2, 0, 0] weight 0.5; ▁a (11) [5, 5, 5, 5] weight 0; ▁dog (959) [0, 0, 1, 0]
 * weight 1; ▁cat (1163) [1, 0, 0, 0] weight 2; ▁sat (3757) [0, 0, 0, -1] weight 1; the fallback
 * [0, 0.6, 0, 0.8]; at most 8 tokens read.
 */
const FIXTURE = fileURLToPath(new URL('../fixtures/static-embedder/', import.meta.url));
const r = Math.sqrt;

function expectVector(actual: number[], expected: number[], digits = 6): void {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((x, i) => expect(x).toBeCloseTo(expected[i]!, digits));
}

describe('StaticEmbedder', () => {
  let embedder: StaticEmbedder;
  let root: string;
  beforeAll(async () => {
    embedder = await StaticEmbedder.load({ directory: FIXTURE });
    root = await mkdtemp(path.join(os.tmpdir(), 'memrag-static-embedder-'));
  });
  afterAll(async () => {
    await embedder?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('names its own vector space and dimensions from the manifest', () => {
    expect(embedder.id).toBe('static:test-fixture-v1');
    expect(embedder.dimensions).toBe(4);
    expect(embedder.maxInputTokens).toBe(8);
    expect(embedder.countTokens('the dog sat')).toBe(3);
  });

  it('normalises the weighted mean of the known tokens', async () => {
    const [cat, theCat, theDogSat, catDogCat] = await embedder.embed(['cat', 'the cat', 'the dog sat', 'cat dog cat']);
    expectVector(cat!, [1, 0, 0, 0]);
    // 2·[1,0,0,0] + 0.5·[0,2,0,0] = [2,1,0,0]
    expectVector(theCat!, [2 / r(5), 1 / r(5), 0, 0]);
    // 0.5·[0,2,0,0] + [0,0,1,0] + [0,0,0,-1] = [0,1,1,-1]
    expectVector(theDogSat!, [0, 1 / r(3), 1 / r(3), -1 / r(3)]);
    // Repeated tokens count each time: 2·2·[1,0,0,0] + [0,0,1,0] = [4,0,1,0]
    expectVector(catDogCat!, [4 / r(17), 0, 1 / r(17), 0]);
  });

  it('ignores unknown tokens and tokens of weight zero', async () => {
    const [withUnknown, withZeroWeight] = await embedder.embed(['zebra cat !!!', 'a cat']);
    expectVector(withUnknown!, [1, 0, 0, 0]);
    expectVector(withZeroWeight!, [1, 0, 0, 0]);
  });

  it('gives empty text and text with no known token the fallback unit vector, never NaN', async () => {
    const vectors = await embedder.embed(['', '   ', 'zebra', 'a', '☃', '!!!']);
    for (const v of vectors) {
      expectVector(v, [0, 0.6, 0, 0.8], 3);
      expect(Math.hypot(...v)).toBeCloseTo(1, 9);
    }
  });

  it('reads at most maxInputTokens tokens, and of a text of any length no more than their characters', async () => {
    // The ninth token (dog) is past the limit of 8.
    expectVector(embedder.embedOne(`${'cat '.repeat(8)}dog`), [1, 0, 0, 0]);
    const huge = `${'cat '.repeat(8)}${'dog '.repeat(2_500_000)}`;
    // Bounded by what is read, not by a clock: the tokenizer is handed 8 × STATIC_CHARACTERS_PER_TOKEN characters, not ten million.
    const encode = vi.spyOn(UseLiteTokenizer.prototype, 'encode');
    try {
      const [vector] = await embedder.embed([huge]);
      expectVector(vector!, [1, 0, 0, 0]);
      expect(encode.mock.calls.map(([text]) => text.length)).toEqual([8 * STATIC_CHARACTERS_PER_TOKEN]);
    } finally {
      encode.mockRestore();
    }
  });

  async function copyOfFixture(name: string): Promise<string> {
    const dir = path.join(root, name);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    for (const file of Object.values(STATIC_MODEL_FILES)) await copyFile(path.join(FIXTURE, file), path.join(dir, file));
    return dir;
  }

  it('refuses weights whose checksum does not match, naming the file and how to rebuild it', async () => {
    const dir = await copyOfFixture('corrupt');
    const weights = path.join(dir, STATIC_MODEL_FILES.weights);
    const bytes = await readFile(weights);
    bytes[3]! ^= 0x01;
    await writeFile(weights, bytes);
    const error = await StaticEmbedder.load({ directory: dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StaticModelUnavailableError);
    expect((error as Error).message).toContain(weights);
    expect((error as Error).message).toContain('is corrupt');
    expect((error as Error).message).toContain('npm run train:static-embedder');
  });

  it('refuses a missing weights file and a missing model folder', async () => {
    const dir = await copyOfFixture('missing');
    await rm(path.join(dir, STATIC_MODEL_FILES.weights));
    await expect(StaticEmbedder.load({ directory: dir })).rejects.toThrow(`${path.join(dir, STATIC_MODEL_FILES.weights)} is missing`);
    await expect(StaticEmbedder.load({ directory: path.join(root, 'nowhere') })).rejects.toThrow(
      `${path.join(root, 'nowhere', STATIC_MODEL_FILES.manifest)} is missing. Rebuild it with \`npm run train:static-embedder\``,
    );
  });

  it('refuses a table edited after training (its checksum)', async () => {
    const dir = await copyOfFixture('table');
    const table = path.join(dir, STATIC_MODEL_FILES.table);
    await writeFile(table, (await readFile(table, 'utf8')).replace('1163\t2\t', '1163\t3\t'));
    await expect(StaticEmbedder.load({ directory: dir })).rejects.toThrow(`${table} is corrupt`);
  });

  it('is built by EMBEDDING_PROVIDER=static in this thread, from EMBEDDING_MODEL', async () => {
    const built = await createEmbedder(loadConfig({ EMBEDDING_PROVIDER: 'static', EMBEDDING_MODEL: FIXTURE, EMBEDDING_WORKERS: '2' }));
    try {
      expect(built).toBeInstanceOf(StaticEmbedder);
      expect(built.id).toBe('static:test-fixture-v1');
      expectVector((await built.embed(['the cat']))[0]!, [2 / r(5), 1 / r(5), 0, 0]);
    } finally {
      await built.close();
    }
    await expect(createEmbedder(loadConfig({ EMBEDDING_PROVIDER: 'static', EMBEDDING_MODEL: FIXTURE, EMBEDDING_DIMENSIONS: '512' }))).rejects.toThrow(
      'static:test-fixture-v1 produces 4-dimensional vectors',
    );
    await expect(createEmbedder(loadConfig({ EMBEDDING_PROVIDER: 'static', EMBEDDING_MODEL: path.join(root, 'nowhere') }))).rejects.toBeInstanceOf(
      StaticModelUnavailableError,
    );
  });

  it('leaves the provider to the store when unset, and keeps bundled selectable by name', () => {
    expect(loadConfig({}).EMBEDDING_PROVIDER).toBeUndefined();
    expect(loadConfig({ EMBEDDING_PROVIDER: 'bundled' }).EMBEDDING_PROVIDER).toBe('bundled');
  });
});
