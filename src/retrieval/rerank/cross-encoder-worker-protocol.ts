import type { CrossEncoderModelOptions } from './cross-encoder-model.js';

/** What CrossEncoderWorkers' threads are set up with, report, and are asked. */
export interface CrossEncoderWorkerInit {
  options: CrossEncoderModelOptions;
}

export interface CrossEncoderIdentity {
  id: string;
  maxLength: number;
}

export interface ScoreTask {
  query: string;
  passages: string[];
}
