/**
 * Worker-thread entry of CrossEncoderWorkers: loads one cross-encoder and scores batches one at
 * a time, so the model's synchronous onnxruntime calls never hold the server's thread.
 */
import { servePoolTasks } from '../../workers/pool-worker.js';
import { CrossEncoderModel } from './cross-encoder-model.js';
import type { CrossEncoderIdentity, CrossEncoderWorkerInit, ScoreTask } from './cross-encoder-worker-protocol.js';

export default await servePoolTasks(async ({ options }: CrossEncoderWorkerInit) => {
  const model = await CrossEncoderModel.load(options);
  return {
    info: { id: model.id, maxLength: model.maxLength } satisfies CrossEncoderIdentity,
    run: async ({ query, passages }: ScoreTask) => Float64Array.from(await model.score(query, passages)),
    transfer: (scores: Float64Array<ArrayBuffer>) => [scores.buffer],
  };
});
