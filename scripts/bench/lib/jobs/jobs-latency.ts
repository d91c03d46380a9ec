import os from 'node:os';
import { resolve } from 'node:path';
import { createAppContext } from '../../../../src/app-context.js';
import { loadConfig } from '../../../../src/config/config.js';
import { createEmbedder } from '../../../../src/embeddings/create-embedder.js';
import { createApp } from '../../../../src/http/app.js';
import { createLogger } from '../../../../src/observability/logger.js';
import { loadCorpus } from '../beir.js';
import { repoRoot, LATENCY_RUNS, median, fmt, sleep } from './jobs-config.js';

// ---------------------------------------------------------------------------------------------
// latency: from 202 to searchable
// ---------------------------------------------------------------------------------------------

export async function benchLatency(): Promise<void> {
  const corpus = (await loadCorpus(resolve(repoRoot, '../shared/datasets/scifact'))).filter((d) => d.text.trim() !== '' && d.title.trim() !== '');
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATA_DIR: 'memory://', DATABASE_URL: undefined, EMBEDDING_PROVIDER: 'bundled' });
  const embedder = await createEmbedder(config);
  const ctx = await createAppContext(config, { embedder, logger: createLogger('silent') });
  const app = createApp(ctx);
  const post = async (path: string, body: unknown) => {
    const res = await app.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  try {
    // A store that is not empty, and a warm model.
    for (const d of corpus.slice(0, 20)) await post('/v1/documents', { title: d.title, text: d.text });
    const bm25: number[] = [];
    const vector: number[] = [];
    const ended: number[] = [];
    for (const d of corpus.slice(20, 20 + LATENCY_RUNS)) {
      const accepted = await post('/v1/documents', { title: d.title, text: d.text, async: true });
      const t0 = performance.now();
      if (accepted.status !== 202) throw new Error(`expected 202, got ${accepted.status}`);
      const jobId = accepted.body.job.id as string;
      // Found when it is the first hit for its own title: BM25 and vector polled side by side.
      const until = async (mode: 'text' | 'vector') => {
        for (;;) {
          const res = await post('/v1/search', { query: d.title, mode, topK: 3 });
          if ((res.body.hits as { title: string }[]).some((h) => h.title === d.title)) return performance.now() - t0;
          if (performance.now() - t0 > 60_000) throw new Error(`"${d.title}" not found by ${mode} within 60 s`);
          await sleep(5);
        }
      };
      const job = (async () => {
        for (;;) {
          const res = await app.request(`/v1/jobs/${jobId}`);
          const body = (await res.json()) as { job: { status: string } };
          if (body.job.status === 'succeeded') return performance.now() - t0;
          if (body.job.status === 'failed') throw new Error('job failed');
          await sleep(5);
        }
      })();
      const [b, v, j] = await Promise.all([until('text'), until('vector'), job]);
      bm25.push(b);
      vector.push(v);
      ended.push(j);
    }
    console.log(
      `latency, npm start defaults (PGlite, in-process workers, bundled embedder with ${os.availableParallelism()} threads): ${LATENCY_RUNS} abstracts, one at a time`,
    );
    console.log(`  202 -> job succeeded:      median ${median(ended).toFixed(0)} ms   (${fmt(ended, 0)})`);
    console.log(`  202 -> found by BM25:      median ${median(bm25).toFixed(0)} ms   (${fmt(bm25, 0)})`);
    console.log(`  202 -> found by vector:    median ${median(vector).toFixed(0)} ms   (${fmt(vector, 0)})`);
  } finally {
    await ctx.close();
  }
}
