import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { env } from '@huggingface/transformers';

/** Where a transformers.js model comes from; shared by the embedder and the cross-encoder reranker. */
export interface TransformersModelSource {
  /** A Hugging Face model id (`Xenova/all-MiniLM-L6-v2`) or a local folder laid out like one. */
  model: string;
  /** Where downloaded models are kept and looked up (transformers.js `env.cacheDir`). */
  cacheDir?: string;
  /** May files missing locally be fetched from the Hugging Face hub? Default false: offline. */
  allowRemote?: boolean;
}

/** The `from_pretrained` options that follow from a source. */
export interface PretrainedSourceOptions {
  cache_dir?: string;
  local_files_only: boolean;
}

/** Tokenizers without a real limit report 1e30 (Python's VERY_LARGE_INTEGER) or leave it unset. */
const UNSET_LIMIT = 1_000_000;
const FALLBACK_MAX_INPUT_TOKENS = 512;

// env is process-wide (per thread), and from_pretrained consults it (not only its options) while
// listing files, so loads are serialised to keep each one's cache/remote settings in force until
// it has finished.
let loading: Promise<unknown> = Promise.resolve();

/**
 * Runs `load` with transformers.js configured for `source`: the model path to pass to
 * from_pretrained (a local folder made absolute, else the hub id) and the matching options.
 */
export function loadFromSource<T>(source: TransformersModelSource, load: (modelPath: string, options: PretrainedSourceOptions) => Promise<T>): Promise<T> {
  const next = loading.then(() => {
    const allowRemote = source.allowRemote ?? false;
    env.allowLocalModels = true;
    env.allowRemoteModels = allowRemote;
    if (source.cacheDir) env.cacheDir = path.resolve(source.cacheDir);
    return load(resolveLocalFolder(source.model) ?? source.model, {
      ...(source.cacheDir ? { cache_dir: path.resolve(source.cacheDir) } : {}),
      local_files_only: !allowRemote,
    });
  });
  loading = next.catch(() => undefined);
  return next;
}

/** The name ids are built from: a local folder's base name, else the hub id. */
export function sourceName(source: TransformersModelSource): string {
  const localFolder = resolveLocalFolder(source.model);
  return localFolder ? path.basename(localFolder) : source.model;
}

/**
 * An existing directory is a local model. transformers.js treats absolute paths as local
 * folders but reads `owner/name`-shaped relative paths as hub ids, so folders are made absolute.
 */
export function resolveLocalFolder(model: string): string | undefined {
  const candidate = path.resolve(model);
  return existsSync(candidate) && statSync(candidate).isDirectory() ? candidate : undefined;
}

/** The model's input limit in tokens: the tokenizer's, else the position embeddings', else 512. */
export function detectMaxInputTokens(tokenizer: { model_max_length: unknown }, config: { max_position_embeddings?: unknown }): number {
  const fromTokenizer = Number(tokenizer.model_max_length);
  if (Number.isFinite(fromTokenizer) && fromTokenizer > 0 && fromTokenizer < UNSET_LIMIT) return fromTokenizer;
  const fromConfig = Number(config.max_position_embeddings);
  if (Number.isFinite(fromConfig) && fromConfig > 0) return fromConfig;
  return FALLBACK_MAX_INPUT_TOKENS;
}
