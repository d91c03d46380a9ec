/**
 * Worker-thread entry of CrossEncoderWorkers: loads one cross-encoder from workerData and scores
 * batches one at a time, so the model's synchronous onnxruntime calls never hold the server's thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { serializeError } from '../../embeddings/embedding-worker-protocol.js';
import { CrossEncoderModel } from './cross-encoder-model.js';
import type { CrossEncoderWorkerInit, FromCrossEncoderWorker, ToCrossEncoderWorker } from './cross-encoder-worker-protocol.js';

const port = parentPort;
if (!port) throw new Error('cross-encoder-worker must run in a worker thread');

const post = (message: FromCrossEncoderWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

try {
  const model = await CrossEncoderModel.load((workerData as CrossEncoderWorkerInit).options);
  post({ type: 'ready', id: model.id, maxLength: model.maxLength });
  // The host sends one task at a time per worker; chaining keeps that true even if it did not.
  let queue = Promise.resolve();
  port.on('message', (message: ToCrossEncoderWorker) => {
    queue = queue.then(async () => {
      try {
        const scores = Float64Array.from(await model.score(message.query, message.passages));
        post({ type: 'scores', taskId: message.taskId, scores }, [scores.buffer]);
      } catch (error) {
        post({ type: 'failed', taskId: message.taskId, error: serializeError(error) });
      }
    });
  });
} catch (error) {
  post({ type: 'init-failed', error: serializeError(error) });
}
