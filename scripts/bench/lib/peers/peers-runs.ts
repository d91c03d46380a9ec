import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { openDatabase } from '../../../../src/db/database.js';
import { DEFAULT_EF_SEARCH } from '../../../../src/db/filtered-vector-search.js';
import { SEARCH_SESSION_SETTINGS, vectorSearchPoolOf } from '../../../../src/db/vector-search-connections.js';
import { vectorToBinary } from '../../../../src/db/vector-wire-format.js';
import { ensureVectorSpace } from '../../../../src/db/vector-space.js';
import { createDocumentSearch } from '../../../../src/documents/document-search.js';
import { createPgMemoryStore } from '../../../../src/memory/pg-memory-store.js';
import { MEMORY_CORPUS, memoryFilter } from '../../../../src/memory/memory-corpus.js';
import { normalizeTagFilter } from '../../../../src/retrieval/filter.js';
import { createRetrievalEngine } from '../../../../src/retrieval/retrieval-engine.js';
import { loadPgVector } from '../load-pg-vector.js';
import { type ClusteredSet, TAG_CASES, type TagCase } from '../clustered-set.js';
import {
  N,
  PGLITE_N,
  EXACT_QUERIES,
  TOP_K,
  DIMS,
  hybridOnly,
  MASTRA_INDEX,
  HAND_EF_SEARCH,
  serverDatabase,
  bulkFill,
  withPgVector,
  log,
  type System,
} from './peers-config.js';
import { capturePrepared, printPlans } from './peers-sql-capture.js';
import { openFresh, benchEmbedder, fillMemrag, chunkIndexOf, setLayout, withIndexesBuiltAfter } from './peers-setup.js';
import {
  HAND_MEMORY_SYSTEM,
  HAND_REPAIRED_SYSTEM,
  HAND_SAME_WORK_SYSTEM,
  HAND_SQL,
  MEMORY_COLUMNS,
  MEMRAG_IDS_SYSTEM,
  MEMRAG_STATEMENT_SYSTEM,
  rowOfKey,
  measure,
} from './peers-measure.js';
import { hybrid } from './peers-hybrid.js';

// One run per driver: the systems set up on the server or on PGlite, measured, their plans printed.
export async function serverRun(set: ClusteredSet, results: Record<string, string | number>[], hybrids: Record<string, string | number>[]) {
  const { url, filled } = await openFresh(serverDatabase);
  const database = await openDatabase({ url });
  const embedder = benchEmbedder(set);
  await ensureVectorSpace(database.db, embedder);
  const mastra = withPgVector ? new (await loadPgVector())({ id: 'peers', connectionString: url }) : null;
  const insert: Record<string, string> = {};
  if (!filled) {
    await setLayout(database);
    log(`filling memrag (${N} memories, ${N} chunks)`);
    const fill = () => fillMemrag(database, set, N);
    const rates = bulkFill ? await withIndexesBuiltAfter(url, fill) : await fill();
    insert['memrag memories'] = rates.memories.toFixed(0);
    insert['memrag chunks'] = rates.chunks.toFixed(0);
  }
  if (!filled && mastra) {
    log(`filling PgVector`);
    await mastra.createIndex({
      indexName: MASTRA_INDEX,
      dimension: DIMS,
      metric: 'cosine',
      indexConfig: { type: 'hnsw', hnsw: { m: 16, efConstruction: 128 } },
    });
    const t0 = performance.now();
    for (let start = 0; start < N; start += 500) {
      const ids: string[] = [];
      const vectors: number[][] = [];
      const metadata: Record<string, unknown>[] = [];
      for (let i = start; i < Math.min(N, start + 500); i++) {
        ids.push(`m${i}`);
        vectors.push(set.row(i));
        metadata.push({ tags: set.tags(i) });
      }
      await mastra.upsert({ indexName: MASTRA_INDEX, ids, vectors, metadata });
    }
    insert.PgVector = (N / ((performance.now() - t0) / 1000)).toFixed(0);
  }
  if (!filled) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    for (const t of ['memories', 'chunks', ...(withPgVector ? [MASTRA_INDEX] : [])]) await admin.query(`VACUUM ANALYZE ${t}`);
    await admin.end();
  }
  const chunkIndex = await chunkIndexOf(database);
  const store = createPgMemoryStore({ db: database.db, embedder });
  const docs = createDocumentSearch({ db: database.db, embedder });
  const hand = new pg.Pool({ connectionString: url, max: 10 });
  // Per connection, once: the settings never change between these searches.
  hand.on('connect', (client) => {
    void client.query(`SET hnsw.ef_search = ${HAND_EF_SEARCH}; SET hnsw.iterative_scan = relaxed_order`);
  });
  // The same statement at memrag's own candidate list: the anchor at equal recall.
  const handEqual = new pg.Pool({ connectionString: url, max: 10 });
  handEqual.on('connect', (client) => {
    void client.query(`SET hnsw.ef_search = ${DEFAULT_EF_SEARCH}; SET hnsw.iterative_scan = relaxed_order`);
  });
  const exact = new pg.Pool({ connectionString: url, max: 2 });
  exact.on('connect', (client) => {
    void client.query(`SET enable_indexscan = off`);
  });
  const handSearch = (pool: pg.Pool, columns?: string) => async (q: number, c: TagCase) => {
    const values: unknown[] = ['default', 'bench', vectorToBinary(set.query(q))];
    if (c.tag) values.push(`{${c.tag}}`);
    const r = await pool.query<{ key: string }>({ text: HAND_SQL(c.tag !== null, columns), values });
    return r.rows.map((x) => rowOfKey(x.key));
  };
  // memrag's order repair written by hand: on a filter, twice the rows, the best by distance kept.
  const handRepaired = (columns?: string) => async (q: number, c: TagCase) => {
    if (!c.tag) return handSearch(handEqual, columns)(q, c);
    const values: unknown[] = ['default', 'bench', vectorToBinary(set.query(q)), `{${c.tag}}`];
    const text = HAND_SQL(true, `${columns ?? 'key'}, embedding <=> $3::vector AS distance`, 2 * TOP_K);
    const r = await handEqual.query<{ key: string; distance: number }>({ text, values });
    return r.rows
      .sort((a, b) => a.distance - b.distance)
      .slice(0, TOP_K)
      .map((x) => rowOfKey(x.key));
  };
  // The engine's vector statement with no payload: what the store's search costs beside its columns and its memories.
  const engine = createRetrievalEngine({ db: database.db, embedder });
  const keyOfId = new Map(
    (await hand.query<{ id: string; key: string }>(`SELECT id::text, key FROM memories WHERE tenant_id = 'default'`)).rows.map((r) => [r.id, r.key]),
  );
  const statementAlone = await memoryStatementAlone(url, (c) =>
    store.searchByVector(set.query(0), { agentId: 'bench', topK: TOP_K, ...(c.tag ? { tagsAny: [c.tag] } : {}) }),
  );
  const pgVectorSystem: System = {
    name: 'PgVector',
    search: async (q, c) =>
      (await mastra!.query({ indexName: MASTRA_INDEX, queryVector: set.query(q), topK: TOP_K, ...(c.tag ? { filter: { tags: { $in: [c.tag] } } } : {}) })).map(
        (h) => rowOfKey(h.id),
      ),
    skip: (c, pass) => pass === 2 && c.tag !== null,
  };
  const systems: System[] = [
    {
      name: 'memrag memories',
      search: async (q, c) =>
        (await store.searchByVector(set.query(q), { agentId: 'bench', topK: TOP_K, ...(c.tag ? { tagsAny: [c.tag] } : {}) })).map((h) =>
          rowOfKey(h.memory.key),
        ),
    },
    {
      name: 'memrag chunks',
      search: async (q, c) =>
        (await docs.vectorCandidates(set.query(q), normalizeTagFilter(c.tag ? { tagsAny: [c.tag] } : {}), TOP_K)).map((h) => chunkIndex.get(h.id)!),
    },
    {
      name: MEMRAG_IDS_SYSTEM,
      search: async (q, c) =>
        (
          await engine.vectorCandidates(
            MEMORY_CORPUS,
            set.query(q),
            memoryFilter('default', { agentId: 'bench', ...(c.tag ? { tagsAny: [c.tag] } : {}) }),
            TOP_K,
          )
        ).map((h) => rowOfKey(keyOfId.get(h.id)!)),
    },
    { name: MEMRAG_STATEMENT_SYSTEM, search: async (q, c) => statementAlone.search(vectorToBinary(set.query(q)), c) },
    ...(mastra ? [pgVectorSystem] : []),
    { name: 'hand-written SQL', search: handSearch(hand) },
    { name: `hand-written SQL, ef_search ${DEFAULT_EF_SEARCH}`, search: handSearch(handEqual) },
    { name: HAND_MEMORY_SYSTEM, search: handSearch(handEqual, MEMORY_COLUMNS) },
    { name: HAND_REPAIRED_SYSTEM, search: handRepaired() },
    { name: HAND_SAME_WORK_SYSTEM, search: handRepaired(MEMORY_COLUMNS) },
    { name: 'exact scan', search: handSearch(exact), skip: (_c, pass) => pass === 2, queries: EXACT_QUERIES },
  ];
  if (!hybridOnly) {
    log('measuring (pass 1: all; pass 2: without the full-table scans)');
    await measure(systems, set, N, 2, results, 'pg', insert);
  }
  hybrids.push(...(await hybrid(database, set, 'pg')));
  // memrag's statements are explained on its search connections, whose sessions they are planned for.
  const searchPool = vectorSearchPoolOf((database.db as unknown as { $client: pg.Pool }).$client)!;
  const planPool = (name: string) => (name === 'exact scan' ? exact : name.startsWith('memrag') ? searchPool : hand);
  if (!hybridOnly) for (const s of systems) await printPlans(s.name, planPool(s.name), (c) => s.search(0, c));
  await statementAlone.end();
  await hand.end();
  await handEqual.end();
  await exact.end();
  await mastra?.disconnect();
  await database.close();
}

/**
 * The statement the memory store prepares for each case (captured from its searches until one
 * runs prepared), run on a connection set as vector-search-connections.ts sets its own.
 */
async function memoryStatementAlone(url: string, searchOnce: (c: TagCase) => Promise<unknown>) {
  const statements = new Map<string, { name: string; text: string }>();
  for (const c of TAG_CASES) {
    for (let tries = 0; tries < 50 && !statements.has(c.label); tries++) {
      const found = (await capturePrepared(() => searchOnce(c))).find((s) => s.name.startsWith('memrag_vector_search'));
      if (found) statements.set(c.label, { name: `peers_${found.name}`, text: found.text });
    }
    if (!statements.has(c.label)) throw new Error(`the memory store never ran a prepared search for ${c.label}`);
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(SEARCH_SESSION_SETTINGS);
  return {
    search: async (vector: Buffer, c: TagCase) => {
      const { rows } = await client.query<{ key: string | null }>({ ...statements.get(c.label)!, values: [vector] });
      return rows.flatMap((r) => (r.key === null ? [] : [rowOfKey(r.key)]));
    },
    end: () => client.end(),
  };
}

export async function pgliteRun(set: ClusteredSet, results: Record<string, string | number>[], hybrids: Record<string, string | number>[]) {
  const database = await openDatabase({});
  const embedder = benchEmbedder(set);
  await ensureVectorSpace(database.db, embedder);
  log(`filling PGlite (${PGLITE_N} memories, ${PGLITE_N} chunks)`);
  const rates = await fillMemrag(database, set, PGLITE_N);
  await database.db.execute(sql`VACUUM ANALYZE`);
  const chunkIndex = await chunkIndexOf(database);
  const store = createPgMemoryStore({ db: database.db, embedder });
  const docs = createDocumentSearch({ db: database.db, embedder });
  const systems: System[] = [
    {
      name: 'memrag memories',
      search: async (q, c) =>
        (await store.searchByVector(set.query(q), { agentId: 'bench', topK: TOP_K, ...(c.tag ? { tagsAny: [c.tag] } : {}) })).map((h) =>
          rowOfKey(h.memory.key),
        ),
    },
    {
      name: 'memrag chunks',
      search: async (q, c) =>
        (await docs.vectorCandidates(set.query(q), normalizeTagFilter(c.tag ? { tagsAny: [c.tag] } : {}), TOP_K)).map((h) => chunkIndex.get(h.id)!),
    },
  ];
  await measure(systems, set, PGLITE_N, 1, results, 'pglite', { 'memrag memories': rates.memories.toFixed(0), 'memrag chunks': rates.chunks.toFixed(0) });
  hybrids.push(...(await hybrid(database, set, 'pglite')));
  await database.close();
}
