import type { SerializedError } from '../../embeddings/embedding-worker-protocol.js';
import type { CrossEncoderModelOptions } from './cross-encoder-model.js';

/** Messages between CrossEncoderWorkers and its worker threads. */
export interface CrossEncoderWorkerInit {
  options: CrossEncoderModelOptions;
}

export type ToCrossEncoderWorker = { type: 'score'; taskId: number; query: string; passages: string[] };

export type FromCrossEncoderWorker =
  | { type: 'ready'; id: string; maxLength: number }
  | { type: 'init-failed'; error: SerializedError }
  | { type: 'scores'; taskId: number; scores: Float64Array }
  | { type: 'failed'; taskId: number; error: SerializedError };
