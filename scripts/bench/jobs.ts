/**
 * Durable jobs (issue 16), four measurements; BENCH_PARTS picks some (default all):
 *
 *  queue       Per-job cost of the queue itself (enqueue, claim, complete in a transaction, an
 *              instant handler, one consumer): the hand-written SKIP LOCKED table against pg-boss 10
 *              (the newest pg-boss that runs on Node 20), alternating blocks on the PostgreSQL
 *              server; the hand-written one on PGlite too, and whether pg-boss starts on PGlite.
 *  pipeline    Queue overhead per ingested document: the same documents through the ingest
 *              pipeline directly and as jobs through the runner, with an instant embedder, PGlite
 *              and the server.
 *  throughput  End-to-end ingestion of SciFact abstracts on the server with the bundled embedder:
 *              one worker process (`src/worker-main.ts`, one embedding thread) against two (one
 *              thread each), and the embedder pool alone (one thread, two threads) embedding the very
 *              chunk texts the workers embedded. Alternating blocks; the second worker process is
 *              paused (SIGSTOP, while the queue is empty) for the one-worker blocks.
 *  latency     `npm start` as it comes (PGlite, in-process workers, bundled embedder): time from the
 *              202 of an async POST /v1/documents to the abstract being found by BM25 and by vector.
 *
 * The figures docs/benchmarks/jobs.md quotes are from runs of `npm run bench:jobs` with the server set:
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:jobs
 *   BENCH_PARTS=queue BENCH_JOBS=300 BENCH_BLOCKS=4 …    BENCH_DOCS=16 (per throughput block) BENCH_LATENCY_RUNS=5
 */
import os from 'node:os';
import { parts, summary } from './lib/jobs/jobs-config.js';
import { benchQueue } from './lib/jobs/jobs-queue.js';
import { benchPipeline } from './lib/jobs/jobs-pipeline.js';
import { benchThroughput } from './lib/jobs/jobs-throughput.js';
import { benchLatency } from './lib/jobs/jobs-latency.js';

console.log(
  `machine: ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the start`,
);

if (parts.has('queue')) await benchQueue();
if (parts.has('pipeline')) await benchPipeline();
if (parts.has('throughput')) await benchThroughput();
if (parts.has('latency')) await benchLatency();
const overhead = summary.overheadServerMs ?? summary.overheadPgliteMs;
const perDoc = summary.embedderMsPerDoc2;
if (overhead !== undefined && perDoc !== undefined) {
  console.log(
    `queue overhead as a share of the embedder's time per document (pool of 2 threads, ${perDoc.toFixed(0)} ms/doc): ${((overhead / perDoc) * 100).toFixed(1)}%`,
  );
}
console.log(
  `load average at the end: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
