import { z } from 'zod';

/**
 * The files of a static embedding model (one folder): `manifest.json` describes it and holds the
 * sha256 of the others; `tokens.tsv` lists the tokenizer ids the model knows, each with its piece
 * (for people) and its weight in the mean; `weights.bin` holds one vector per listed token, then
 * the fallback vector, quantised as the manifest says.
 */
export const STATIC_MODEL_FILES = Object.freeze({ manifest: 'manifest.json', table: 'tokens.tsv', weights: 'weights.bin' });

export const STATIC_MODEL_FORMAT = 'memrag-static-embedder/1' as const;

/** What the runtime rebuilds a missing or corrupt model with. */
export const STATIC_MODEL_REBUILD_COMMAND = 'npm run train:static-embedder';

export const quantizationSchema = z.enum(['int8-row-scale', 'float16']);
export type StaticQuantization = z.infer<typeof quantizationSchema>;

const fileEntry = z.object({ path: z.string().min(1), sha256: z.string().regex(/^[0-9a-f]{64}$/), bytes: z.number().int().nonnegative() });

export const staticManifestSchema = z.object({
  format: z.literal(STATIC_MODEL_FORMAT),
  /** The vector space id: names the model's version, so a retrained model is a new space. */
  modelId: z.string().regex(/^static:[a-z0-9][a-z0-9.-]*-v\d+$/, 'static:<name>-v<version>'),
  /** The embedder the vectors were distilled from (its vector space id). */
  teacher: z.string().min(1),
  tokenizer: z.object({ name: z.literal('use-lite-sentencepiece'), vocabularySha256: z.string().regex(/^[0-9a-f]{64}$/) }),
  dimensions: z.number().int().positive(),
  tokens: z.number().int().nonnegative(),
  maxInputTokens: z.number().int().min(2),
  quantization: quantizationSchema,
  files: z.object({ table: fileEntry, weights: fileEntry }),
  sources: z.array(z.object({ name: z.string(), sentences: z.number().int().nonnegative() }).passthrough()),
  parameters: z.record(z.string(), z.unknown()),
  metrics: z.record(z.string(), z.unknown()).optional(),
});
export type StaticManifest = z.infer<typeof staticManifestSchema>;

/** The tokens a model knows, in the order of its weight rows (static-token-table.ts reads and writes it). */
export interface TokenTable {
  ids: number[];
  pieces: string[];
  /** Each token's weight in the mean; 0: the token is not counted. */
  weights: number[];
}

/** Bytes of a weights file holding `rows` vectors of `dimensions`. */
export function weightsByteLength(quantization: StaticQuantization, rows: number, dimensions: number): number {
  return quantization === 'float16' ? rows * dimensions * 2 : rows * 4 + rows * dimensions;
}
