/**
 * Worker-thread entry of the embedding pool: builds one embedder from the spec it is given and
 * embeds batches of texts, one at a time.
 */
import { servePoolTasks } from '../workers/pool-worker.js';
import { loadEmbedderFromSpec } from './embedder-module-spec.js';
import type { EmbeddedBatch, EmbedderIdentity, EmbeddingWorkerInit } from './embedding-worker-protocol.js';

export default await servePoolTasks(async ({ spec }: EmbeddingWorkerInit) => {
  const embedder = await loadEmbedderFromSpec(spec);
  const { id, dimensions, maxInputTokens } = embedder;
  return {
    info: { id, dimensions, maxInputTokens } satisfies EmbedderIdentity,
    run: async (texts: string[]): Promise<EmbeddedBatch> => {
      const vectors = await embedder.embed(texts);
      const flat = new Float64Array(vectors.length * dimensions);
      vectors.forEach((v, i) => flat.set(v, i * dimensions));
      return { count: vectors.length, vectors: flat };
    },
    transfer: (batch: EmbeddedBatch) => [batch.vectors.buffer],
  };
});
