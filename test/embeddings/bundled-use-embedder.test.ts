import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BundledUseEmbedder, MAX_PADDED_TOKENS_PER_CALL } from '../../src/embeddings/bundled-use-embedder.js';
import { cosine, expectUnitVectors, maxAbsDifference } from './support/vector-assertions.js';

interface Tensor {
  data(): Promise<Float32Array>;
  dispose(): void;
}

describe('BundledUseEmbedder', () => {
  let embedder: BundledUseEmbedder;
  beforeAll(async () => {
    embedder = await BundledUseEmbedder.load({ batchSize: 4 });
  });
  afterAll(async () => {
    await embedder?.close();
  });

  it('describes its vector space', () => {
    expect(embedder.id).toBe('bundled:use-lite');
    expect(embedder.dimensions).toBe(512);
    expect(embedder.maxInputTokens).toBe(128);
  });

  it('lets go of the weights file once its weights are in the wasm heap', async () => {
    const graph = (embedder as unknown as { graph: { artifacts?: { weightData?: unknown; modelTopology?: unknown } } }).graph;
    expect(graph.artifacts?.weightData).toBeUndefined();
    expect(graph.artifacts?.modelTopology).toBeUndefined();
    expectUnitVectors(await embedder.embed(['still embeds']), 512);
  });

  it('returns one 512-d unit vector per text, empty text included', async () => {
    const vectors = await embedder.embed(['The cat sat on the mat.', '', 'Vector search over memories.']);
    expect(vectors).toHaveLength(3);
    expectUnitVectors(vectors, 512);
  });

  it('ranks a paraphrase closer than an unrelated sentence', async () => {
    const [query, paraphrase, unrelated] = await embedder.embed(['How old are you?', 'What is your age?', 'The train to Paris leaves from platform nine.']);
    expect(cosine(query!, paraphrase!)).toBeGreaterThan(cosine(query!, unrelated!) + 0.1);
  });

  it('gives each text the same vector whatever batch it is in', async () => {
    const texts = Array.from({ length: 10 }, (_, i) => `note ${i}: ${'remember the milk '.repeat(i + 1)}`);
    const together = await embedder.embed(texts);
    const alone = [];
    for (const text of texts) alone.push(...(await embedder.embed([text])));
    expect(maxAbsDifference(together, alone)).toBeLessThan(1e-5);
  });

  it('runs long texts a few at a time, so a call never pads past MAX_PADDED_TOKENS_PER_CALL', async () => {
    const wide = await BundledUseEmbedder.load({ batchSize: 32 });
    type Inputs = { indices: { dataSync(): Int32Array } };
    const model = (wide as unknown as { graph: { execute: (inputs: Inputs) => unknown } }).graph;
    const original = model.execute;
    // Each call's texts and padded size (texts × the longest), read off its sparse input.
    const calls: { texts: number; padded: number }[] = [];
    model.execute = (inputs) => {
      const indices = inputs.indices.dataSync();
      let rows = 0;
      let columns = 0;
      for (let i = 0; i < indices.length; i += 2) {
        rows = Math.max(rows, indices[i]! + 1);
        columns = Math.max(columns, indices[i + 1]! + 1);
      }
      calls.push({ texts: rows, padded: rows * columns });
      return original.call(model, inputs);
    };
    try {
      const long = (i: number) => Array.from({ length: 140 }, (_, j) => `word${(i + j) % 40}`).join(' ');
      const short = (i: number) => `short note ${i}`;
      expect(MAX_PADDED_TOKENS_PER_CALL).toBe(8 * 128);
      // Texts that fill the 128 tokens: 8 a call, then the 2 left.
      await wide.embed(Array.from({ length: 10 }, (_, i) => long(i)));
      expect(calls).toEqual([
        { texts: 8, padded: 8 * 128 },
        { texts: 2, padded: 2 * 128 },
      ]);
      // A long text after 8 short ones would pad all 9 to 128: it waits for the next call.
      calls.length = 0;
      await wide.embed([...Array.from({ length: 8 }, (_, i) => short(i)), long(0), long(1)]);
      expect(calls.map((c) => c.texts)).toEqual([8, 2]);
      for (const call of calls) expect(call.padded).toBeLessThanOrEqual(MAX_PADDED_TOKENS_PER_CALL);
      calls.length = 0;
      await wide.embed(Array.from({ length: 20 }, (_, i) => short(i)));
      expect(calls.map((c) => c.texts)).toEqual([20]);
    } finally {
      model.execute = original;
      await wide.close();
    }
  });

  it('gives the vectors of the whole graph, whose dynamic steps it computes itself', async () => {
    const texts = ['', 'short', 'How old are you?', Array.from({ length: 150 }, (_, i) => `word${i}`).join(' '), 'remember the milk '.repeat(9)];
    const ours = await embedder.embed(texts);
    // The graph as shipped, from the sparse input alone, through TF.js's asynchronous executor.
    const { tf, graph } = embedder as unknown as {
      tf: { tensor2d(v: Int32Array, s: [number, number], d: 'int32'): Tensor; tensor1d(v: Int32Array, d: 'int32'): Tensor };
      graph: { executeAsync(inputs: Record<string, Tensor>): Promise<Tensor> };
    };
    const tokenizer = (embedder as unknown as { tokenizer: { encode(text: string): number[] } }).tokenizer;
    const lists = texts.map((text) => tokenizer.encode(text || ' ').slice(0, 128));
    const positions = lists.flatMap((tokens, row) => tokens.flatMap((_, column) => [row, column]));
    const indices = tf.tensor2d(Int32Array.from(positions), [positions.length / 2, 2], 'int32');
    const values = tf.tensor1d(Int32Array.from(lists.flat()), 'int32');
    const output = await graph.executeAsync({ indices, values });
    const flat = await output.data();
    for (const t of [indices, values, output]) t.dispose();
    const whole = texts.map((_, i) => {
      const v = Array.from(flat.subarray(i * 512, (i + 1) * 512));
      const norm = Math.hypot(...v);
      return v.map((x) => x / norm);
    });
    expect(maxAbsDifference(ours, whole)).toBeLessThan(1e-6);
  });

  it('ignores everything after the 128th token, like the model itself', async () => {
    const long = Array.from({ length: 150 }, (_, i) => `word${i}`).join(' ');
    const [a, b] = await embedder.embed([long, `${long} and a completely different ending about volcanoes`]);
    expect(maxAbsDifference([a!], [b!])).toBeLessThan(1e-6);
  });

  it('honours an aborted signal and a closed embedder', async () => {
    await expect(embedder.embed(['x'], { signal: AbortSignal.abort() })).rejects.toThrow(/abort/i);
    const other = await BundledUseEmbedder.load();
    await other.close();
    await expect(other.embed(['x'])).rejects.toThrow(/closed/);
    // Closing one instance must not unload the model another instance still uses.
    expect(await embedder.embed(['still works'])).toHaveLength(1);
  });
});
