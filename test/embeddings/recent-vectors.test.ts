import { describe, expect, it } from 'vitest';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { rememberRecentVectors } from '../../src/embeddings/recent-vectors.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';

/** The hash embedder, recording the texts of every call the model gets. */
function countingModel() {
  const model = createHashEmbedder(16);
  const seen: string[][] = [];
  const embedder: Embedder = {
    ...model,
    embed: (texts, options) => {
      seen.push([...texts]);
      return model.embed(texts, options);
    },
  };
  return { embedder, seen, model };
}

describe('rememberRecentVectors', () => {
  it('serves a text embedded again from memory, with the same vector', async () => {
    const { embedder, seen, model } = countingModel();
    const remembering = rememberRecentVectors(embedder);
    const [first] = await remembering.embed(['The user prefers tea']);
    const [again] = await remembering.embed(['The user prefers tea']);
    expect(again).toEqual(first);
    expect(again).toEqual((await model.embed(['The user prefers tea']))[0]);
    expect(seen).toEqual([['The user prefers tea']]);
  });

  it('sends the model only the texts it has not seen, each once, and answers in order', async () => {
    const { embedder, seen, model } = countingModel();
    const remembering = rememberRecentVectors(embedder);
    await remembering.embed(['a cat', 'a dog']);
    const vectors = await remembering.embed(['a dog', 'a bird', 'a cat', 'a bird']);
    expect(seen).toEqual([['a cat', 'a dog'], ['a bird']]);
    expect(vectors).toEqual(await model.embed(['a dog', 'a bird', 'a cat', 'a bird']));
  });

  it('forgets the least recently used text first', async () => {
    const { embedder, seen } = countingModel();
    const remembering = rememberRecentVectors(embedder, { entries: 2 });
    await remembering.embed(['one', 'two']);
    await remembering.embed(['one']);
    await remembering.embed(['three']);
    // 'two' was the least recently used of the three.
    await remembering.embed(['one', 'two']);
    expect(seen).toEqual([['one', 'two'], ['three'], ['two']]);
  });

  it('lets long texts through without keeping them', async () => {
    const { embedder, seen } = countingModel();
    const remembering = rememberRecentVectors(embedder, { maxTextLength: 10 });
    await remembering.embed(['a passage longer than ten']);
    await remembering.embed(['a passage longer than ten']);
    expect(seen).toHaveLength(2);
  });

  it('hands out copies, so a caller that changes its vector changes nothing remembered', async () => {
    const remembering = rememberRecentVectors(countingModel().embedder);
    const [first] = await remembering.embed(['same text']);
    const before = [...first!];
    first!.fill(0);
    expect((await remembering.embed(['same text']))[0]).toEqual(before);
  });

  it('remembers nothing of a call that failed or was aborted', async () => {
    const { embedder, seen } = countingModel();
    let fail = true;
    const flaky: Embedder = { ...embedder, embed: (texts, options) => (fail ? Promise.reject(new Error('worker died')) : embedder.embed(texts, options)) };
    const remembering = rememberRecentVectors(flaky);
    await expect(remembering.embed(['x'])).rejects.toThrow('worker died');
    await expect(remembering.embed(['x'], { signal: AbortSignal.abort() })).rejects.toThrow(/abort/i);
    fail = false;
    await remembering.embed(['x']);
    expect(seen).toEqual([['x']]);
  });

  it("passes the model's identity, tokenizer and liveness through, and refuses calls once closed", async () => {
    const inner = { ...countingModel().embedder, countTokens: (text: string) => text.length, alive: () => false };
    const remembering = rememberRecentVectors(inner);
    expect([remembering.id, remembering.dimensions, remembering.countTokens?.('abc'), remembering.alive?.()]).toEqual([inner.id, 16, 3, false]);
    expect(remembering.closed).toBe(false);
    await remembering.close();
    expect(remembering.closed).toBe(true);
    await expect(remembering.embed(['x'])).rejects.toThrow(/closed/);
  });
});
