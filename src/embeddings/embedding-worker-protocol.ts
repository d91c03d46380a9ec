import type { EmbedderModuleSpec } from './embedder-module-spec.js';

/** Messages between the embedding pool and its worker threads. */
export interface WorkerInit {
  spec: EmbedderModuleSpec;
}

export type ToWorker = { type: 'embed'; taskId: number; texts: string[] };

export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
}

export type FromWorker =
  | { type: 'ready'; id: string; dimensions: number; maxInputTokens: number }
  | { type: 'init-failed'; error: SerializedError }
  // Vectors travel as one flat, transferred Float64Array: no per-number cloning, no precision loss.
  | { type: 'result'; taskId: number; count: number; vectors: Float64Array }
  | { type: 'failed'; taskId: number; error: SerializedError };

export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) return { name: error.name, message: error.message, stack: error.stack };
  return { name: 'Error', message: String(error) };
}

export function deserializeError(error: SerializedError): Error {
  const revived = new Error(error.message);
  revived.name = error.name;
  if (error.stack) revived.stack = error.stack;
  return revived;
}
