import { performance } from 'node:perf_hooks';
import type { Database } from '../../../../src/db/database.js';
import { memories } from '../../../../src/db/schema/index.js';
import { MEMORY_CORPUS, memoryFilter } from '../../../../src/memory/memory-corpus.js';
import { createPgMemoryStore } from '../../../../src/memory/pg-memory-store.js';
import { getTableColumns } from 'drizzle-orm';
import { createRetrievalEngine } from '../../../../src/retrieval/retrieval-engine.js';
import { rankUnits } from '../../../../src/retrieval/rank-units.js';
import { fusionWeightsFor } from '../../../../src/retrieval/fusion-weights.js';
import { hybridCandidates } from '../../../../src/retrieval/hybrid-candidates.js';
import { type ClusteredSet, TAG_CASES, percentile } from '../clustered-set.js';
import { TOP_K, log } from './peers-config.js';
import { benchEmbedder } from './peers-setup.js';

// memrag's hybrid search, its BM25 side and fusion timed apart.

// The columns the memory store's hits carry, as its vector side fetches them.
const { embedding: _e, id: _i, bm25Length: _b, tenantId: _t, ...MEMORY_PAYLOAD } = getTableColumns(memories);

export async function hybrid(database: Database, set: ClusteredSet, driver: string): Promise<Record<string, string | number>[]> {
  const embedder = benchEmbedder(set);
  const store = createPgMemoryStore({ db: database.db, embedder });
  const engine = createRetrievalEngine({ db: database.db, embedder });
  const weights = fusionWeightsFor(embedder.id);
  const candidateK = hybridCandidates(TOP_K);
  const out: Record<string, string | number>[] = [];
  for (const c of TAG_CASES) {
    const filter = memoryFilter('default', { agentId: 'bench', ...(c.tag ? { tagsAny: [c.tag] } : {}) });
    const parts = { hybrid: [] as number[], vector: [] as number[], bm25: [] as number[], fusion: [] as number[], embed: [] as number[] };
    for (let q = -3; q < set.queries; q++) {
      const text = set.queryText(Math.max(q, 0));
      let t = performance.now();
      const vector = await engine.embedQuery(text);
      const embedMs = performance.now() - t;
      // Rotated, so that no part always finds the query's postings and graph pages warm.
      let hybridMs = 0;
      let vectorMs = 0;
      let bm25Ms = 0;
      let fusionMs = 0;
      let v: Awaited<ReturnType<typeof engine.vectorCandidates>> = [];
      let b: Awaited<ReturnType<typeof engine.textCandidates>> = [];
      const steps = [
        async () => {
          const t0 = performance.now();
          await store.search(text, { agentId: 'bench', topK: TOP_K, mode: 'hybrid', ...(c.tag ? { tagsAny: [c.tag] } : {}) });
          hybridMs = performance.now() - t0;
        },
        async () => {
          const t0 = performance.now();
          v = await engine.vectorCandidates(MEMORY_CORPUS, vector, filter, candidateK, MEMORY_PAYLOAD, false);
          vectorMs = performance.now() - t0;
        },
        async () => {
          const t0 = performance.now();
          b = await engine.textCandidates(MEMORY_CORPUS, text, filter, candidateK);
          bm25Ms = performance.now() - t0;
        },
      ];
      for (let k = 0; k < steps.length; k++) await steps[(q + 3 + k) % steps.length]!();
      t = performance.now();
      rankUnits('hybrid', v, b, weights);
      fusionMs = performance.now() - t;
      if (q < 0) continue;
      parts.hybrid.push(hybridMs - embedMs);
      parts.vector.push(vectorMs);
      parts.bm25.push(bm25Ms);
      parts.fusion.push(fusionMs);
      parts.embed.push(embedMs);
    }
    const r = {
      driver,
      case: c.label,
      'hybrid p50 ms': +percentile(parts.hybrid, 50).toFixed(2),
      'hybrid p95 ms': +percentile(parts.hybrid, 95).toFixed(2),
      'vector side p50': +percentile(parts.vector, 50).toFixed(2),
      'BM25 side p50': +percentile(parts.bm25, 50).toFixed(2),
      'fusion p50': +percentile(parts.fusion, 50).toFixed(3),
      'embed p50 (apart)': +percentile(parts.embed, 50).toFixed(3),
    };
    out.push(r);
    log(JSON.stringify(r));
  }
  return out;
}
