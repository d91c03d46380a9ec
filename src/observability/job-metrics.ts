import { Counter, Gauge, Histogram } from 'prom-client';
import { metricsRegistry } from './metrics.js';

/** Where the queue-depth gauge reads from: the database of the process's job runner, when it has one. */
let depthSource: (() => Promise<{ queued: number; running: number }>) | undefined;

/** The queue as /metrics shows it, read from the database at scrape time: every process sees the same backlog. */
export function setJobQueueDepthSource(source: typeof depthSource): () => void {
  depthSource = source;
  return () => {
    if (depthSource === source) depthSource = undefined;
  };
}

export const jobQueueDepth = new Gauge({
  name: 'memrag_job_queue_depth',
  help: 'Jobs waiting (queued) or being worked on (running), across every worker of the database',
  labelNames: ['status'] as const,
  registers: [metricsRegistry],
  async collect() {
    if (!depthSource) return;
    // A scrape must not fail because the database is briefly away: the gauge keeps its last value.
    const depth = await depthSource().catch(() => undefined);
    if (!depth) return;
    this.set({ status: 'queued' }, depth.queued);
    this.set({ status: 'running' }, depth.running);
  },
});

export const jobDuration = new Histogram({
  name: 'memrag_job_duration_seconds',
  help: 'One attempt of a job in this process, from its claim to its end, by kind and outcome (succeeded|failed|retried|lost)',
  labelNames: ['kind', 'outcome'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800],
  registers: [metricsRegistry],
});

export const jobFailures = new Counter({
  name: 'memrag_job_failures_total',
  help: 'Attempts of jobs that failed, by kind, whether they will be retried, and error code',
  labelNames: ['kind', 'retried', 'code'] as const,
  registers: [metricsRegistry],
});
