import { describe, expect, it } from 'vitest';
import { coalescingEmbedder } from '../../src/embeddings/coalescing-embedder.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';

describe('coalescingEmbedder', () => {
  it('runs concurrent requests for one text once, and batches as they are', async () => {
    const inner = createHashEmbedder();
    const embedder = coalescingEmbedder(inner);
    const [a, b, c] = await Promise.all([embedder.embed(['green tea']), embedder.embed(['green tea']), embedder.embed(['black tea'])]);
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
    expect(inner.calls).toBe(2);
    await embedder.embed(['green tea']);
    expect(inner.calls).toBe(3);
    expect(await embedder.embed(['a', 'b'])).toEqual(await inner.embed(['a', 'b']));
  });

  it('lets one caller give up without failing the others', async () => {
    const embedder = coalescingEmbedder(createHashEmbedder());
    const controller = new AbortController();
    const gaveUp = embedder.embed(['tea'], { signal: controller.signal });
    const waited = embedder.embed(['tea']);
    controller.abort(new Error('gone'));
    await expect(gaveUp).rejects.toThrow('gone');
    expect(await waited).toHaveLength(1);
  });

  it('aborts the shared work once every caller has given up, so a request timeout still stops its embedding', async () => {
    const aborts: unknown[] = [];
    const slow = {
      ...createHashEmbedder(),
      embed: (_texts: string[], options?: { signal?: AbortSignal }) =>
        new Promise<number[][]>((_resolve, reject) => {
          options?.signal?.addEventListener('abort', () => {
            aborts.push(options.signal!.reason);
            reject(options.signal!.reason);
          });
        }),
    };
    const embedder = coalescingEmbedder(slow);
    const first = new AbortController();
    const second = new AbortController();
    const a = embedder.embed(['tea'], { signal: first.signal });
    const b = embedder.embed(['tea'], { signal: second.signal });
    first.abort(new Error('first gone'));
    await expect(a).rejects.toThrow('first gone');
    expect(aborts).toEqual([]);
    second.abort(new Error('timeout'));
    await expect(b).rejects.toThrow('timeout');
    expect(aborts).toHaveLength(1);
  });
});
