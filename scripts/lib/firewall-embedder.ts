import path from 'node:path';
import { z } from 'zod';
import { createBundledUseEmbedder } from '../../src/embeddings/bundled-use-embedder.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { StaticEmbedder } from '../../src/embeddings/static-embedder.js';
import { DEFAULT_STATIC_MODEL_DIR, readStaticModel } from '../../src/embeddings/static-model-files.js';
import { loadUseLiteTokenizer } from '../../src/embeddings/use-lite-tokenizer.js';

const envSchema = z.object({
  EMBEDDING_PROVIDER: z.enum(['bundled', 'static']).default('bundled'),
  /** The static model's folder. */
  EMBEDDING_MODEL: z.string().min(1).optional(),
});

export interface FirewallEmbedder {
  embedder: Embedder;
  /** The generated classifier file of this embedder, under src/memory/firewall/. */
  weightsFile: string;
  /** The sha256 of the static model's weights file: the classifier holds for that model only. */
  embedderSha256?: string;
}

/** The embedder the firewall's classifier is trained and measured on, as the environment names it (EMBEDDING_PROVIDER, EMBEDDING_MODEL). */
export async function firewallEmbedder(environment: NodeJS.ProcessEnv): Promise<FirewallEmbedder> {
  const env = envSchema.parse(environment);
  if (env.EMBEDDING_PROVIDER === 'bundled') return { embedder: await createBundledUseEmbedder(), weightsFile: 'injection-classifier-weights.ts' };
  const directory = path.resolve(env.EMBEDDING_MODEL ?? DEFAULT_STATIC_MODEL_DIR);
  // Read and checked once: the embedder is built from the same files whose checksum the classifier records.
  const [model, tokenizer] = await Promise.all([readStaticModel(directory), loadUseLiteTokenizer()]);
  return {
    embedder: new StaticEmbedder(model, tokenizer),
    weightsFile: staticWeightsFile(model.manifest.modelId),
    embedderSha256: model.manifest.files.weights.sha256,
  };
}

/** The classifier file of a static model: the first version's keeps its name, each later one is suffixed with its version. */
function staticWeightsFile(modelId: string): string {
  const version = /-v(\d+)$/.exec(modelId)?.[1];
  return version === undefined || version === '1' ? 'injection-classifier-weights-static.ts' : `injection-classifier-weights-static-v${version}.ts`;
}
