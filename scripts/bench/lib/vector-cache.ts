/**
 * An embedder wrapper that keeps every vector it computed in a file, so benchmark runs after the
 * first skip the model (embedding SciFact's chunks with the bundled model takes many minutes).
 * Keyed by embedder id and the exact text; a vector from the file is what the model returned.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Embedder } from '../../../src/embeddings/embedder.js';

export const DEFAULT_VECTOR_CACHE_DIR = '/tmp/memrag-vector-cache';

export function cachingEmbedder(inner: Embedder, dir = process.env.VECTOR_CACHE_DIR ?? DEFAULT_VECTOR_CACHE_DIR): Embedder & { hits: number; misses: number } {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${inner.id.replace(/[^\w.-]+/g, '_')}-${inner.dimensions}.jsonl`);
  const cache = new Map<string, number[]>();
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        const { h, v } = JSON.parse(line) as { h: string; v: string };
        // Copied out: a small Buffer is a view into a shared pool, at any offset.
        cache.set(h, Array.from(new Float32Array(new Uint8Array(Buffer.from(v, 'base64')).buffer)));
      } catch {
        // A line cut short by an interrupted run.
      }
    }
  }
  const key = (text: string) => createHash('sha1').update(text).digest('base64');
  const wrapper = {
    id: inner.id,
    dimensions: inner.dimensions,
    maxInputTokens: inner.maxInputTokens,
    ...(inner.countTokens ? { countTokens: inner.countTokens.bind(inner) } : {}),
    hits: 0,
    misses: 0,
    async embed(texts: string[], options?: { signal?: AbortSignal }): Promise<number[][]> {
      const keys = texts.map(key);
      const missing = [
        ...new Set(
          keys
            .map((k, i) => (cache.has(k) ? -1 : i))
            .filter((i) => i >= 0)
            .map((i) => texts[i]!),
        ),
      ];
      wrapper.hits += texts.length - missing.length;
      wrapper.misses += missing.length;
      if (missing.length > 0) {
        const vectors = await inner.embed(missing, options);
        const lines: string[] = [];
        missing.forEach((text, i) => {
          const k = key(text);
          cache.set(k, vectors[i]!);
          lines.push(JSON.stringify({ h: k, v: Buffer.from(new Float32Array(vectors[i]!).buffer).toString('base64') }));
        });
        appendFileSync(file, `${lines.join('\n')}\n`);
      }
      return keys.map((k) => cache.get(k)!);
    },
    close: () => inner.close(),
  };
  return wrapper;
}
