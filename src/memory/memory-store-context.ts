import type { Db } from '../db/database.js';
import type { AfterBulkWrite } from '../db/table-statistics.js';
import type { Embedder } from '../embeddings/embedder.js';
import { type Analyzer, defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { type CorpusIndex, createCorpusIndex } from '../retrieval/corpus-index.js';
import type { CorpusFilter } from '../retrieval/filter.js';
import { filterToSql } from '../retrieval/filter-sql.js';
import { type FusionWeights, fusionWeightsFor } from '../retrieval/fusion-weights.js';
import { type RetrievalEngine, type TenantCorpusOptions, createRetrievalEngine } from '../retrieval/retrieval-engine.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { MEMORY_CORPUS } from './memory-corpus.js';
import type { MemoryActor } from './memory-types.js';
import { ACTIVE, type FirewallVerdict, type MemoryWriteScreen } from './memory-write-screen.js';
import { embedOncePerWrite } from './write-vectors.js';

/** The analyzer must be the one that indexed the stored memories (`indexUnindexedMemories` at start). */
export interface PgMemoryStoreOptions extends TenantCorpusOptions {
  /** Called after a batch save commits, to bring planner statistics up to date (`TableStatistics`). */
  afterBulkWrite?: AfterBulkWrite;
  /** Screens the writes it says to (the model's, extraction's); absent: nothing is screened. */
  firewall?: MemoryWriteScreen;
}

export const API_ACTOR: MemoryActor = Object.freeze({ type: 'api' });
export const SYSTEM_ACTOR: MemoryActor = Object.freeze({ type: 'system' });

/** What the memory store's parts share: one tenant's corpus, its engine and index, and the store's options. */
export interface MemoryStoreContext {
  readonly options: PgMemoryStoreOptions;
  readonly db: Db;
  readonly embedder: Embedder;
  readonly tenantId: string;
  readonly analyzer: Analyzer;
  readonly weights: Readonly<FusionWeights>;
  readonly engine: RetrievalEngine;
  /** Taken first by every writer of the tenant's memories: see CorpusIndex. */
  readonly index: CorpusIndex;
  embedOne(text: string): Promise<number[]>;
  embedMany(texts: readonly string[]): Promise<number[][]>;
  where(filter: CorpusFilter): ReturnType<typeof filterToSql>;
  /** The firewall's verdicts on writes by `actor`: all active when it does not screen them. */
  screen(texts: readonly string[], actor: MemoryActor, untrusted?: boolean): Promise<FirewallVerdict[]>;
}

export function createMemoryStoreContext(options: PgMemoryStoreOptions): MemoryStoreContext {
  const { db, embedder } = options;
  const analyzer = options.analyzer ?? defaultAnalyzer;
  const engine = createRetrievalEngine({ ...options, analyzer });
  // A write's content is embedded once, whether the firewall or the write embeds it first.
  const writes = embedOncePerWrite(embedder);
  return {
    options,
    db,
    embedder,
    tenantId: options.tenantId ?? DEFAULT_TENANT_ID,
    analyzer,
    weights: Object.freeze({ ...(options.weights ?? fusionWeightsFor(embedder.id)) }),
    engine,
    index: createCorpusIndex(MEMORY_CORPUS, analyzer),
    // writes.embed checks that every text got its vector.
    embedOne: async (text) => (await writes.embed([text]))[0]!,
    async embedMany(texts) {
      if (texts.length === 0) return [];
      return writes.embed([...texts]);
    },
    where: (filter) => filterToSql(filter, MEMORY_CORPUS.filters),
    async screen(texts, actor, untrusted) {
      const firewall = options.firewall;
      if (!firewall?.screens(actor, untrusted)) return texts.map(() => ACTIVE);
      return firewall.screen(texts, writes);
    },
  };
}
