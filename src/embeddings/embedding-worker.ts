/**
 * Worker-thread entry of the embedding pool: builds one embedder from the spec it is given and
 * embeds batches of texts, one call at a time. Small batches it holds at once (queries and
 * saves under load) go through the model together: a model call has a fixed cost, about two
 * thirds of the 9 ms a short query takes alone with the bundled model, where 32 short texts take
 * 3 ms each.
 */
import { servePoolTasks } from '../workers/pool-worker.js';
import { loadEmbedderFromSpec } from './embedder-module-spec.js';
import { BIG_BATCH_TEXTS, type EmbeddedBatch, type EmbedderIdentity, type EmbeddingWorkerInit } from './embedding-worker-protocol.js';

/** Most texts of several held batches embedded in one call: the bundled model's own batch size. */
const TOGETHER_MAX_TEXTS = 32;

export default await servePoolTasks(async ({ spec }: EmbeddingWorkerInit) => {
  const embedder = await loadEmbedderFromSpec(spec);
  const { id, dimensions, maxInputTokens } = embedder;
  const batchOf = (vectors: number[][]): EmbeddedBatch => {
    const flat = new Float64Array(vectors.length * dimensions);
    vectors.forEach((v, i) => flat.set(v, i * dimensions));
    return { count: vectors.length, vectors: flat };
  };
  return {
    info: { id, dimensions, maxInputTokens } satisfies EmbedderIdentity,
    run: async (texts: string[]): Promise<EmbeddedBatch> => batchOf(await embedder.embed(texts)),
    together: {
      fits: (batches: readonly string[][]) =>
        batches.every((texts) => texts.length < BIG_BATCH_TEXTS) && batches.reduce((n, texts) => n + texts.length, 0) <= TOGETHER_MAX_TEXTS,
      run: async (batches: string[][]): Promise<EmbeddedBatch[]> => {
        const texts = batches.flat();
        const vectors = await embedder.embed(texts);
        // Fewer vectors would shift every later batch's onto another caller's texts.
        if (vectors.length !== texts.length) throw new Error(`embedded ${texts.length} texts into ${vectors.length} vectors`);
        let at = 0;
        return batches.map((texts) => batchOf(vectors.slice(at, (at += texts.length))));
      },
    },
    transfer: (batch: EmbeddedBatch) => [batch.vectors.buffer],
  };
});
