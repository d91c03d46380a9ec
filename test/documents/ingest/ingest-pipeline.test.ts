import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../../src/db/database.js';
import { queryRows } from '../../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../../src/db/vector-space.js';
import { type DocumentStore, createDocumentStore } from '../../../src/documents/document-store.js';
import { chunkStage } from '../../../src/documents/ingest/chunk-stage.js';
import { embedStage } from '../../../src/documents/ingest/embed-stage.js';
import { INGEST_STAGES, type IngestProgress, type IngestStage, createIngestPipeline } from '../../../src/documents/ingest/ingest-pipeline.js';
import { normaliseStage } from '../../../src/documents/ingest/normalise-stage.js';
import { parseStage } from '../../../src/documents/ingest/parse-stage.js';
import { writeStage } from '../../../src/documents/ingest/write-stage.js';
import { defaultAnalyzer } from '../../../src/retrieval/bm25/analyzer.js';
import { createHashEmbedder } from '../../../testkit/hash-embedder.js';
import { GUIDE } from '../support/widget-guide.js';

describe('ingest pipeline', () => {
  let database: Database;
  const embedder = createHashEmbedder(64);
  let store: DocumentStore;

  beforeAll(async () => {
    database = await openDatabase({});
    await ensureVectorSpace(database.db, embedder);
    store = createDocumentStore({ db: database.db, embedder });
  });
  afterAll(async () => {
    await database?.close();
  });
  beforeEach(async () => {
    for (const { id } of await queryRows<{ id: string }>(database.db, sql`SELECT id::text AS id FROM documents`)) await store.delete(id);
  });

  async function counts() {
    const [row] = await queryRows<{ d: number; c: number; p: number; t: number; n: string | null }>(
      database.db,
      sql`SELECT (SELECT count(*)::int FROM documents) AS d, (SELECT count(*)::int FROM chunks) AS c,
                 (SELECT count(*)::int FROM postings) AS p, (SELECT count(*)::int FROM term_stats) AS t,
                 (SELECT max(total_chunks)::text FROM corpus_stats) AS n`,
    );
    return { documents: Number(row!.d), chunks: Number(row!.c), postings: Number(row!.p), terms: Number(row!.t), passages: Number(row!.n ?? 0) };
  }

  it('runs stage by stage, reporting each embedded batch, and writes what the store would', async () => {
    const db = database.db;
    const input = { content: GUIDE, format: 'markdown' as const, filename: 'guide.md', tags: ['Docs'], chunking: { maxTokens: 16, overlapTokens: 0 } };
    const parsed = await parseStage(input);
    expect(parsed).toMatchObject({ format: 'markdown', markup: 'markdown' });
    const normalised = normaliseStage(parsed, input);
    expect(normalised).toMatchObject({ title: 'guide', tags: ['docs'], metadata: {}, source: null, text: GUIDE.trim() });
    const chunked = chunkStage(normalised, { maxInputTokens: embedder.maxInputTokens, analyzer: defaultAnalyzer, chunking: input.chunking });
    expect(chunked.chunks.length).toBeGreaterThan(4);
    expect(await counts()).toMatchObject({ documents: 0, chunks: 0 });

    const progress: { done: number; total: number }[] = [];
    const calls = embedder.calls;
    const embedded = await embedStage(chunked, { embedder, batchSize: 2, onProgress: (p) => progress.push(p) });
    const total = chunked.chunks.length;
    const expected = Array.from({ length: Math.ceil(total / 2) }, (_, i) => ({ done: Math.min(2 * (i + 1), total), total }));
    expect(progress).toEqual(expected);
    expect(embedder.calls - calls).toBe(expected.length);
    expect(embedded.vectors).toHaveLength(total);
    expect(await counts()).toMatchObject({ documents: 0, chunks: 0 });

    const written = await writeStage(embedded, { db, tenantId: 'default', analyzer: defaultAnalyzer });
    expect(written.status).toBe('created');
    expect(written.document).toMatchObject({ title: 'guide', format: 'markdown', chunkCount: total, contentHash: normalised.contentHash });
    expect((await store.chunks(written.document.id))!.items.map((c) => c.text)).toEqual(chunked.chunks.map((c) => c.text));
    expect(await store.get(written.document.id)).toEqual(written.document);

    // The same text through the store is the same document.
    const again = await store.ingest(input);
    expect(again).toMatchObject({ status: 'unchanged', document: { id: written.document.id } });
    // Written again from the same stage outputs, it is the race the write stage checks for.
    expect(await writeStage(embedded, { db, tenantId: 'default', analyzer: defaultAnalyzer })).toMatchObject({ status: 'unchanged' });
    expect(await counts()).toMatchObject({ documents: 1, chunks: total });
  });

  it('reports every stage in order, from done 0 to done = total, and embedded chunk counts', async () => {
    const pipeline = createIngestPipeline({ db: database.db, embedder, embedBatchSize: 3 });
    const events: IngestProgress[] = [];
    const { document, status } = await pipeline.run(
      { content: GUIDE, format: 'markdown', chunking: { maxTokens: 16, overlapTokens: 0 } },
      { onProgress: (p) => events.push(p) },
    );
    expect(status).toBe('created');
    const n = document.chunkCount;
    expect(n).toBeGreaterThan(4);
    expect([...new Set(events.map((e) => e.stage))]).toEqual([...INGEST_STAGES]);
    const of = (stage: IngestStage) => events.filter((e) => e.stage === stage).map((e) => [e.done, e.total]);
    expect(of('parse')).toEqual([
      [0, 1],
      [1, 1],
    ]);
    expect(of('normalise')).toEqual([
      [0, 1],
      [1, 1],
    ]);
    expect(of('chunk')).toEqual([
      [0, 1],
      [1, 1],
    ]);
    const batches = Array.from({ length: Math.ceil(n / 3) }, (_, i) => [Math.min(3 * (i + 1), n), n]);
    expect(of('embed')).toEqual([[0, n], ...batches]);
    expect(of('write')).toEqual([
      [0, n],
      [n, n],
    ]);

    // Identical text stops after normalising: nothing is chunked, embedded or written.
    const calls = embedder.calls;
    const repeat: IngestProgress[] = [];
    const again = await pipeline.run({ content: `\r\n${GUIDE}`, format: 'markdown' }, { onProgress: (p) => repeat.push(p) });
    expect(again).toMatchObject({ status: 'unchanged', document: { id: document.id } });
    expect([...new Set(repeat.map((e) => e.stage))]).toEqual(['parse', 'normalise']);
    expect(embedder.calls).toBe(calls);
  });

  it.each(INGEST_STAGES.map((stage) => [stage]))('an abort as %s starts leaves nothing written, and runs no later stage', async (stage) => {
    const existing = await store.ingest({ content: 'Existing content stays.', format: 'text', source: 'src-1' });
    const before = await counts();
    const calls = embedder.calls;
    const controller = new AbortController();
    const events: IngestProgress[] = [];
    const pipeline = createIngestPipeline({ db: database.db, embedder, embedBatchSize: 2 });
    const run = pipeline.run(
      { content: GUIDE, format: 'markdown', source: 'src-1', signal: controller.signal, chunking: { maxTokens: 16 } },
      {
        onProgress: (p) => {
          events.push(p);
          if (p.stage === stage && p.done === 0) controller.abort();
        },
      },
    );
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(events.at(-1)).toMatchObject({ stage, done: 0 });
    expect(events.map((e) => e.stage).filter((s) => INGEST_STAGES.indexOf(s) > INGEST_STAGES.indexOf(stage))).toEqual([]);
    if (INGEST_STAGES.indexOf(stage) <= INGEST_STAGES.indexOf('embed')) expect(embedder.calls).toBe(calls);
    expect(await counts()).toEqual(before);
    expect((await store.chunks(existing.document.id))!.items.map((c) => c.text)).toEqual(['Existing content stays.']);
  });

  it('an abort between embedded batches stops embedding and writes nothing', async () => {
    const before = await counts();
    const controller = new AbortController();
    const pipeline = createIngestPipeline({ db: database.db, embedder, embedBatchSize: 2 });
    const calls = embedder.calls;
    const run = pipeline.run(
      { content: GUIDE, format: 'markdown', signal: controller.signal, chunking: { maxTokens: 16 } },
      { onProgress: (p) => p.stage === 'embed' && p.done === 2 && controller.abort() },
    );
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(embedder.calls - calls).toBe(1);
    expect(await counts()).toEqual(before);
  });

  it('the write stage refuses a document whose embedding did not finish', async () => {
    const input = { content: GUIDE, format: 'markdown' as const, chunking: { maxTokens: 16 } };
    const chunked = chunkStage(normaliseStage(await parseStage(input), { title: 'Guide' }), {
      maxInputTokens: embedder.maxInputTokens,
      analyzer: defaultAnalyzer,
      chunking: input.chunking,
    });
    const [first] = await embedder.embed([chunked.chunks[0]!.indexedText]);
    await expect(writeStage({ ...chunked, vectors: [first!] }, { db: database.db, tenantId: 'default', analyzer: defaultAnalyzer })).rejects.toThrow(
      /did not finish/,
    );
    expect(await counts()).toMatchObject({ documents: 0, chunks: 0 });
  });
});
