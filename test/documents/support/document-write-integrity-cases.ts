import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { queryRows } from '../../../src/db/query-rows.js';
import type { Embedder } from '../../../src/embeddings/embedder.js';
import { createDocumentStore } from '../../../src/documents/document-store.js';
import { DocumentParseError } from '../../../src/documents/parsers/document-parse-error.js';
import { createHashEmbedder } from '../../../testkit/hash-embedder.js';
import { GUIDE } from './widget-guide.js';
import type { DocumentStoreFixture } from './document-store-fixture.js';

/** Writes that race, delete or fail part-way leave statistics exact and nothing half-written. Registered inside the document store contract's `describe`. */
export function documentWriteIntegrityCases(f: DocumentStoreFixture) {
  const { db, store, expectStatsConsistent, counts } = f;
  it('keeps statistics exact under concurrent ingests and deletes, and stores concurrent duplicates once', async () => {
    const first = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store().ingest({ content: `Shared words and unique${i} words, number ${i}.`, format: 'text' })),
    );
    const twins = await Promise.all([0, 1, 2].map(() => store().ingest({ content: 'Same text sent three times at once.', format: 'text' })));
    expect(twins.filter((t) => t.status === 'created')).toHaveLength(1);
    expect(new Set(twins.map((t) => t.document.id)).size).toBe(1);
    await Promise.all([
      ...first.slice(0, 4).map((r) => store().delete(r.document.id)),
      ...Array.from({ length: 4 }, (_, i) => store().ingest({ content: `More shared words, batch two ${i}.`, format: 'text' })),
    ]);
    expect((await counts()).documents).toBe(9);
    await expectStatsConsistent();
  });

  it('keeps one document per source when several versions of it arrive at once', async () => {
    const versions = await Promise.all(
      [0, 1, 2].map((i) => store().ingest({ content: `Version ${i} of the page, words${i}.`, format: 'text', source: 'https://example.com/page' })),
    );
    expect(versions.map((v) => v.status).sort()).toEqual(['created', 'replaced', 'replaced']);
    expect(new Set(versions.map((v) => v.document.id)).size).toBe(1);
    const stored = await store().get(versions[0]!.document.id);
    expect(versions.map((v) => v.document.contentHash)).toContain(stored!.contentHash);
    expect(await counts()).toMatchObject({ documents: 1, chunks: stored!.chunkCount });
    await expectStatsConsistent();
  });

  it('deletes a document with its chunks, postings and statistics', async () => {
    const keep = await store().ingest({ content: GUIDE, format: 'markdown', chunking: { maxTokens: 30 } });
    const gone = await store().ingest({ content: 'Widgets and gadgets: a unique zebra word.', format: 'text' });
    await expectStatsConsistent();
    expect(await store().delete(gone.document.id)).toBe(true);
    expect(await store().delete(gone.document.id)).toBe(false);
    expect(await store().get(gone.document.id)).toBeNull();
    expect(await store().chunks(gone.document.id)).toBeNull();
    const [zebra] = await queryRows(db(), sql`SELECT * FROM term_stats WHERE term = 'zebra'`);
    expect(zebra).toBeUndefined();
    await expectStatsConsistent();
    expect(await store().delete(keep.document.id)).toBe(true);
    expect(await counts()).toEqual({ documents: 0, chunks: 0, postings: 0, terms: 0 });
    await expectStatsConsistent();
  });

  it('leaves nothing behind when the embedder fails part-way', async () => {
    const existing = await store().ingest({ content: 'Existing content stays.', format: 'text', source: 'src-1' });
    const before = await counts();
    const failing = createHashEmbedder(64);
    const inner = failing.embed.bind(failing);
    let calls = 0;
    failing.embed = async (texts: string[]) => {
      if (++calls === 2) throw new Error('embedder crashed');
      return inner(texts);
    };
    const fragile = createDocumentStore({ db: db(), embedder: failing, embedBatchSize: 2 });
    await expect(fragile.ingest({ content: GUIDE, format: 'markdown', chunking: { maxTokens: 16 } })).rejects.toThrow('embedder crashed');
    calls = 0;
    await expect(fragile.ingest({ content: GUIDE, format: 'markdown', source: 'src-1', chunking: { maxTokens: 16 } })).rejects.toThrow('embedder crashed');
    expect(await counts()).toEqual(before);
    expect((await store().chunks(existing.document.id))!.items.map((c) => c.text)).toEqual(['Existing content stays.']);
    await expectStatsConsistent();
  });

  it('rolls back the document when the database refuses a chunk, and writes nothing on a parse error', async () => {
    const before = await counts();
    // pgvector refuses NaN: the document row is written first, then the chunk insert fails.
    const broken: Embedder = { ...createHashEmbedder(64), embed: async (texts) => texts.map(() => new Array<number>(64).fill(Number.NaN)) };
    await expect(createDocumentStore({ db: db(), embedder: broken }).ingest({ content: GUIDE, format: 'markdown' })).rejects.toThrow();
    await expect(store().ingest({ content: new Uint8Array([1, 2, 3]), format: 'pdf', filename: 'x.pdf' })).rejects.toBeInstanceOf(DocumentParseError);
    await expect(store().ingest({ content: '   \n ', format: 'text' })).rejects.toBeInstanceOf(DocumentParseError);
    expect(await counts()).toEqual(before);
    await expectStatsConsistent();
  });
}
