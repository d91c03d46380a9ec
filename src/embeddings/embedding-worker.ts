/**
 * Worker-thread entry of the embedding pool: builds one embedder from the spec in workerData and
 * serves embed requests one at a time.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Embedder } from './embedder.js';
import { loadEmbedderFromSpec } from './embedder-module-spec.js';
import { serializeError, type FromWorker, type ToWorker, type WorkerInit } from './embedding-worker-protocol.js';

const port = parentPort;
if (!port) throw new Error('embedding-worker must run in a worker thread');

const post = (message: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

async function serve(embedder: Embedder): Promise<void> {
  // The pool sends one task at a time per worker; chaining keeps that true even if it did not.
  let queue = Promise.resolve();
  port!.on('message', (message: ToWorker) => {
    queue = queue.then(async () => {
      try {
        const vectors = await embedder.embed(message.texts);
        const flat = new Float64Array(vectors.length * embedder.dimensions);
        vectors.forEach((v, i) => flat.set(v, i * embedder.dimensions));
        post({ type: 'result', taskId: message.taskId, count: vectors.length, vectors: flat }, [flat.buffer]);
      } catch (error) {
        post({ type: 'failed', taskId: message.taskId, error: serializeError(error) });
      }
    });
  });
}

try {
  const embedder = await loadEmbedderFromSpec((workerData as WorkerInit).spec);
  post({ type: 'ready', id: embedder.id, dimensions: embedder.dimensions, maxInputTokens: embedder.maxInputTokens });
  await serve(embedder);
} catch (error) {
  post({ type: 'init-failed', error: serializeError(error) });
}
