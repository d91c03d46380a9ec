import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { createAnalyzer } from '../../src/retrieval/bm25/analyzer.js';
import { InMemoryBm25Index } from '../../src/retrieval/bm25/bm25.js';
import { type DocumentStore, createDocumentStore } from '../../src/documents/document-store.js';
import { AnalyzerMismatchError } from '../../src/retrieval/analyzer-mismatch-error.js';
import { type DocumentSearch, createDocumentSearch } from '../../src/documents/document-search.js';
import { DocumentParseError } from '../../src/documents/parsers/document-parse-error.js';
import { regroupLegacyPassages } from '../../src/documents/passage-regrouping.js';
import { indexedTextOf, prepareChunks } from '../../src/documents/prepare-chunks.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import type { DatabaseDriver } from '../support/database-drivers.js';
import { GUIDE } from './support/widget-guide.js';

const NO_TAGS = { tagsAny: [], tagsAll: [], tagsNone: [] };

/**
 * The document store and knowledge search, run by describeOnDrivers on an empty, migrated database
 * of its own.
 */
export function documentStoreContract(driver: DatabaseDriver) {
  describe('DocumentStore and DocumentSearch', () => {
    let database: Database | undefined;
    const embedder = createHashEmbedder(64);
    let store: DocumentStore;
    let search: DocumentSearch;

    beforeAll(async () => {
      database = await driver.open();
      await ensureVectorSpace(database.db, embedder);
      store = createDocumentStore({ db: database.db, embedder });
      search = createDocumentSearch({ db: database.db, embedder });
    });
    afterAll(async () => {
      await database?.close();
    });
    beforeEach(async () => {
      if (!database) return;
      for (const { id } of await queryRows<{ id: string }>(database.db, sql`SELECT id::text AS id FROM documents`)) await store.delete(id);
    });
    const db = () => database!.db;

    /** Statistics kept incrementally must equal the same statistics recomputed from scratch. */
    async function expectStatsConsistent() {
      const kept = await queryRows<{ term: string; df: number }>(db(), sql`SELECT term, df FROM term_stats ORDER BY term`);
      const recomputed = await queryRows<{ term: string; df: number }>(db(), sql`SELECT term, count(*)::int AS df FROM postings GROUP BY term ORDER BY term`);
      expect(kept.map((r) => [r.term, Number(r.df)])).toEqual(recomputed.map((r) => [r.term, Number(r.df)]));
      const [corpus] = await queryRows<{ total_chunks: string; total_length: string }>(
        db(),
        sql`SELECT total_chunks, total_length FROM corpus_stats WHERE tenant_id = 'default'`,
      );
      // total_chunks counts passages: the chunks that carry a length and postings.
      const [actual] = await queryRows<{ n: number; len: string | null }>(db(), sql`SELECT count(bm25_length)::int AS n, sum(bm25_length) AS len FROM chunks`);
      expect(Number(corpus?.total_chunks ?? 0)).toBe(Number(actual!.n));
      expect(Number(corpus?.total_length ?? 0)).toBe(Number(actual!.len ?? 0));
      const wrongLengths = await queryRows(
        db(),
        sql`SELECT c.id FROM chunks c LEFT JOIN (SELECT chunk_id, sum(tf) AS len FROM postings GROUP BY chunk_id) p ON p.chunk_id = c.id
            WHERE coalesce(p.len, 0) <> coalesce(c.bm25_length, 0) OR (c.bm25_length IS NULL) <> (c.passage_id <> c.id)`,
      );
      expect(wrongLengths).toEqual([]);
      // A passage is a run of its document's chunks, named by the first.
      const strayPassages = await queryRows(
        db(),
        sql`SELECT c.id FROM chunks c JOIN chunks l ON l.id = c.passage_id
            WHERE l.document_id <> c.document_id OR l.index > c.index OR l.passage_id <> l.id
              OR EXISTS (SELECT 1 FROM chunks m WHERE m.document_id = c.document_id AND m.index > l.index AND m.index < c.index AND m.passage_id <> l.id)`,
      );
      expect(strayPassages).toEqual([]);
      const orphans = await queryRows(db(), sql`SELECT c.id FROM chunks c LEFT JOIN chunks l ON l.id = c.passage_id WHERE l.id IS NULL`);
      expect(orphans).toEqual([]);
    }

    async function counts() {
      const [row] = await queryRows<{ d: number; c: number; p: number; t: number }>(
        db(),
        sql`SELECT (SELECT count(*)::int FROM documents) AS d, (SELECT count(*)::int FROM chunks) AS c,
                   (SELECT count(*)::int FROM postings) AS p, (SELECT count(*)::int FROM term_stats) AS t`,
      );
      return { documents: Number(row!.d), chunks: Number(row!.c), postings: Number(row!.p), terms: Number(row!.t) };
    }

    it('ingests Markdown into chunks with heading paths and exact offsets', async () => {
      const { document, status } = await store.ingest({
        content: GUIDE,
        format: 'markdown',
        tags: ['Docs'],
        metadata: { v: 1 },
        chunking: { maxTokens: 24, overlapTokens: 4 },
      });
      expect(status).toBe('created');
      expect(document).toMatchObject({ title: 'Widget Guide', format: 'markdown', tags: ['docs'], metadata: { v: 1 }, source: null });
      expect(document.chunkCount).toBeGreaterThan(2);
      const text = (await store.getText(document.id))!;
      const page = (await store.chunks(document.id))!;
      expect(page.items).toHaveLength(document.chunkCount);
      for (const chunk of page.items) {
        expect(text.slice(chunk.start, chunk.end)).toBe(chunk.text);
        expect(chunk.tokenCount).toBeLessThanOrEqual(24);
      }
      expect(page.items.some((c) => c.headingPath.join('/') === 'Widget Guide/Limits')).toBe(true);
      const paged = (await store.chunks(document.id, { limit: 2 }))!;
      expect(paged.items.map((c) => c.index)).toEqual([0, 1]);
      const rest = (await store.chunks(document.id, { limit: 100, cursor: paged.nextCursor! }))!;
      expect(rest.items[0]!.index).toBe(2);
      await expectStatsConsistent();
    });

    it('a title cut at 1,000 characters split an astral character into U+FFFD', async () => {
      const title = `${'t'.repeat(999)}😀 and more`;
      const { document } = await store.ingest({ title, content: 'Emoji titles are cut whole.', format: 'text' });
      expect(document.title).toBe(`${'t'.repeat(999)}😀`);
      expect(document.title).not.toContain('\uFFFD');
    });

    it('keeps every chunk, title included, within the embedder input limit', async () => {
      const small: Embedder = { ...createHashEmbedder(64), maxInputTokens: 20 };
      const tight = createDocumentStore({ db: db(), embedder: small });
      const seen: string[] = [];
      const inner = small.embed.bind(small);
      small.embed = async (texts) => {
        seen.push(...texts);
        return inner(texts);
      };
      const { document } = await tight.ingest({ title: 'Tokens', content: GUIDE, format: 'markdown', chunking: { maxTokens: 500 } });
      expect(document.chunkCount).toBeGreaterThan(3);
      const { approximateTokenCount } = await import('../../src/text/approximate-token-count.js');
      for (const text of seen) expect(approximateTokenCount(text.replace('\n\n', ' '))).toBeLessThanOrEqual(20);
      expect(seen.every((t) => t.startsWith('Tokens\n\n'))).toBe(true);
    });

    it('returns the existing document for identical content, without embedding or writing', async () => {
      const first = await store.ingest({ content: 'Alpha beta gamma.\n', format: 'text' });
      const before = { calls: embedder.calls, counts: await counts() };
      const again = await store.ingest({ content: '\r\nAlpha beta gamma.', format: 'text', title: 'Other title', source: 'elsewhere' });
      expect(again.status).toBe('unchanged');
      expect(again.document.id).toBe(first.document.id);
      expect(embedder.calls).toBe(before.calls);
      expect(await counts()).toEqual(before.counts);
    });

    it('replaces the chunks of a document re-ingested from the same source', async () => {
      const first = await store.ingest({ content: 'The old manual talks about pumps and valves.', format: 'text', source: 'file:///manual.txt' });
      await store.ingest({ content: 'Another document about valves.', format: 'text' });
      const second = await store.ingest({ content: 'The new manual talks about turbines only.', format: 'text', source: 'file:///manual.txt', tags: ['v2'] });
      expect(second.status).toBe('replaced');
      expect(second.document.id).toBe(first.document.id);
      expect(second.document.tags).toEqual(['v2']);
      const chunks = (await store.chunks(first.document.id))!.items;
      expect(chunks.map((c) => c.text)).toEqual(['The new manual talks about turbines only.']);
      expect(await search.textCandidates('pumps', NO_TAGS, 10)).toEqual([]);
      expect(await search.textCandidates('turbines', NO_TAGS, 10)).toHaveLength(1);
      expect((await store.list()).items).toHaveLength(2);
      await expectStatsConsistent();
    });

    it('keeps statistics exact under concurrent ingests and deletes, and stores concurrent duplicates once', async () => {
      const first = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.ingest({ content: `Shared words and unique${i} words, number ${i}.`, format: 'text' })),
      );
      const twins = await Promise.all([0, 1, 2].map(() => store.ingest({ content: 'Same text sent three times at once.', format: 'text' })));
      expect(twins.filter((t) => t.status === 'created')).toHaveLength(1);
      expect(new Set(twins.map((t) => t.document.id)).size).toBe(1);
      await Promise.all([
        ...first.slice(0, 4).map((r) => store.delete(r.document.id)),
        ...Array.from({ length: 4 }, (_, i) => store.ingest({ content: `More shared words, batch two ${i}.`, format: 'text' })),
      ]);
      expect((await counts()).documents).toBe(9);
      await expectStatsConsistent();
    });

    it('keeps one document per source when several versions of it arrive at once', async () => {
      const versions = await Promise.all(
        [0, 1, 2].map((i) => store.ingest({ content: `Version ${i} of the page, words${i}.`, format: 'text', source: 'https://example.com/page' })),
      );
      expect(versions.map((v) => v.status).sort()).toEqual(['created', 'replaced', 'replaced']);
      expect(new Set(versions.map((v) => v.document.id)).size).toBe(1);
      const stored = await store.get(versions[0]!.document.id);
      expect(versions.map((v) => v.document.contentHash)).toContain(stored!.contentHash);
      expect(await counts()).toMatchObject({ documents: 1, chunks: stored!.chunkCount });
      await expectStatsConsistent();
    });

    it('deletes a document with its chunks, postings and statistics', async () => {
      const keep = await store.ingest({ content: GUIDE, format: 'markdown', chunking: { maxTokens: 30 } });
      const gone = await store.ingest({ content: 'Widgets and gadgets: a unique zebra word.', format: 'text' });
      await expectStatsConsistent();
      expect(await store.delete(gone.document.id)).toBe(true);
      expect(await store.delete(gone.document.id)).toBe(false);
      expect(await store.get(gone.document.id)).toBeNull();
      expect(await store.chunks(gone.document.id)).toBeNull();
      const [zebra] = await queryRows(db(), sql`SELECT * FROM term_stats WHERE term = 'zebra'`);
      expect(zebra).toBeUndefined();
      await expectStatsConsistent();
      expect(await store.delete(keep.document.id)).toBe(true);
      expect(await counts()).toEqual({ documents: 0, chunks: 0, postings: 0, terms: 0 });
      await expectStatsConsistent();
    });

    it('leaves nothing behind when the embedder fails part-way', async () => {
      const existing = await store.ingest({ content: 'Existing content stays.', format: 'text', source: 'src-1' });
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
      expect((await store.chunks(existing.document.id))!.items.map((c) => c.text)).toEqual(['Existing content stays.']);
      await expectStatsConsistent();
    });

    it('rolls back the document when the database refuses a chunk, and writes nothing on a parse error', async () => {
      const before = await counts();
      // pgvector refuses NaN: the document row is written first, then the chunk insert fails.
      const broken: Embedder = { ...createHashEmbedder(64), embed: async (texts) => texts.map(() => new Array<number>(64).fill(Number.NaN)) };
      await expect(createDocumentStore({ db: db(), embedder: broken }).ingest({ content: GUIDE, format: 'markdown' })).rejects.toThrow();
      await expect(store.ingest({ content: new Uint8Array([1, 2, 3]), format: 'pdf', filename: 'x.pdf' })).rejects.toBeInstanceOf(DocumentParseError);
      await expect(store.ingest({ content: '   \n ', format: 'text' })).rejects.toBeInstanceOf(DocumentParseError);
      expect(await counts()).toEqual(before);
      await expectStatsConsistent();
    });

    it('computes BM25 in SQL exactly as the in-memory reference does', async () => {
      const corpus = [
        'Vitamin D deficiency is associated with bone fractures in older adults.',
        'Bone density and fractures: a study of calcium and vitamin intake.',
        'Deep learning for protein folding, with attention and transformers.',
        'Infections of the lung; infection rates among smokers rise with age. Smokers smoke.',
        'The quick brown fox jumps over the lazy dog; the dog sleeps and the fox runs.',
      ];
      for (const [i, text] of corpus.entries())
        await store.ingest({
          title: `Doc ${i}`,
          content: `${text} ${text
            .split(' ')
            .slice(0, i + 2)
            .join(' ')}`,
          format: 'text',
        });
      // Several passages of several chunks each.
      await store.ingest({ title: 'Guide', content: GUIDE, format: 'markdown', chunking: { maxTokens: 16, overlapTokens: 3, passageTokens: 40 } });
      const rows = await queryRows<{ id: string; passage_id: string; title: string; start: number; end: number; document: string }>(
        db(),
        sql`SELECT c.id::text AS id, c.passage_id::text AS passage_id, d.title, c.start, c."end", d.text AS document
            FROM chunks c JOIN documents d ON d.id = c.document_id ORDER BY c.document_id, c.index`,
      );
      const passages = new Map<string, { title: string; document: string; start: number; end: number }>();
      for (const row of rows) {
        const p = passages.get(row.passage_id);
        if (p) p.end = row.end;
        else passages.set(row.passage_id, { title: row.title, document: row.document, start: row.start, end: row.end });
      }
      expect(passages.size).toBeGreaterThan(corpus.length + 1);
      expect(passages.size).toBeLessThan(rows.length);
      const reference = new InMemoryBm25Index();
      for (const [id, p] of passages) reference.add(id, indexedTextOf(p.title, p.document.slice(p.start, p.end)));
      for (const query of ['vitamin D fractures', 'infection smokers smoking', 'fox dog dog', 'doc', 'widget installer plans', 'nothing matches xyzzy']) {
        const expected = reference.search(query, { topK: 100 });
        const actual = await search.textCandidates(query, NO_TAGS, 100);
        expect(actual.map((h) => h.id).sort()).toEqual(expected.map((h) => h.id).sort());
        const scores = new Map(expected.map((h) => [h.id, h.score]));
        for (const hit of actual) expect(Math.abs(hit.score - scores.get(hit.id)!)).toBeLessThan(1e-6);
        expect(actual.map((h) => h.score)).toEqual([...actual.map((h) => h.score)].sort((a, b) => b - a));
      }
    });

    // Regression: BM25 over 128-token chunks ranked a document by its best chunk alone, so query
    // terms spread over neighbouring chunks added nothing (SciFact nDCG@10 0.644 against 0.698 on
    // whole abstracts). Passages of several chunks score them together.
    it('ranks a document whose query terms fall in different chunks above those holding a single term', async () => {
      const filler = (n: number) => Array.from({ length: n }, (_, i) => `filler${i}`).join(' ');
      const spread = `Vitamin levels were measured at baseline. ${filler(12)}. Hip fractures were recorded during follow-up.`;
      const rank = async (passageTokens: number) => {
        for (const { id } of await queryRows<{ id: string }>(db(), sql`SELECT id::text AS id FROM documents`)) await store.delete(id);
        const a = await store.ingest({ title: 'Cohort', content: spread, format: 'text', chunking: { maxTokens: 20, overlapTokens: 0, passageTokens } });
        expect(a.document.chunkCount).toBeGreaterThan(2);
        await store.ingest({ title: 'Supplements', content: 'Vitamin supplements taken daily.', format: 'text' });
        await store.ingest({ title: 'Healing', content: 'Fractures heal slowly.', format: 'text' });
        for (let i = 0; i < 6; i++) await store.ingest({ title: `Other ${i}`, content: `Unrelated note ${i} about ${filler(20 + i)}.`, format: 'text' });
        return { a, hits: await search.search('vitamin fractures', { mode: 'text', topK: 2 }) };
      };
      // Every chunk a passage of its own: the old behaviour, with the one-term documents first.
      const chunked = await rank(1);
      expect(chunked.hits.map((h) => h.title).sort()).toEqual(['Healing', 'Supplements']);
      const { a, hits } = await rank(512);
      expect(hits[0]!.title).toBe('Cohort');
      expect(hits[0]).toMatchObject({ documentId: a.document.id, ranks: { vector: null, text: 1 } });
      // The hit cites the passage's chunk that covers most of the query.
      const cited = await search.search('hip fractures follow-up', { mode: 'text', topK: 1 });
      expect(cited[0]!.text).toContain('Hip fractures');
      expect(cited[0]!.chunkIndex).toBeGreaterThan(0);
      await expectStatsConsistent();
    });

    it('regroups the chunks of documents indexed before passages as an ingest groups them, without embedding', async () => {
      const texts = [GUIDE, `${GUIDE}\n\n## More\n\nExtra widgets need extra names and extra colours.`];
      const legacy = [];
      for (const text of texts)
        legacy.push(await store.ingest({ title: 'Guide', content: text, format: 'markdown', chunking: { maxTokens: 16, passageTokens: 1 } }));
      const current = await store.ingest({ title: 'Other', content: 'Gadgets are not widgets.', format: 'text' });
      // As migration 0005 leaves documents indexed before passages: one passage per chunk, no size.
      await db().execute(sql`UPDATE documents SET passage_tokens = NULL WHERE id IN (${legacy[0]!.document.id}, ${legacy[1]!.document.id})`);
      const calls = embedder.calls;

      expect(await regroupLegacyPassages(db(), { batchSize: 1 })).toBe(2);
      expect(await regroupLegacyPassages(db())).toBe(0);
      expect(embedder.calls).toBe(calls);
      await expectStatsConsistent();
      for (const [i, text] of texts.entries()) {
        const expected = prepareChunks({
          title: 'Guide',
          text: text.trim(),
          markup: 'markdown',
          maxInputTokens: embedder.maxInputTokens,
          analyzer: createAnalyzer(),
          options: { maxTokens: 16 },
        });
        const stored = await queryRows<{ id: string; passage_id: string; index: number }>(
          db(),
          sql`SELECT id::text AS id, passage_id::text AS passage_id, index FROM chunks WHERE document_id = ${legacy[i]!.document.id} ORDER BY index`,
        );
        expect(stored).toHaveLength(expected.length);
        const indexOf = new Map(stored.map((r) => [r.id, r.index]));
        expect(stored.map((r) => indexOf.get(r.passage_id))).toEqual(expected.map((c) => c.passage));
        expect(new Set(stored.map((r) => r.passage_id)).size).toBeLessThan(stored.length);
      }
      const [row] = await queryRows<{ n: number }>(db(), sql`SELECT count(*)::int AS n FROM documents WHERE passage_tokens IS NULL`);
      expect(Number(row!.n)).toBe(0);
      expect((await search.search('widget colours', { mode: 'text', topK: 5 })).map((h) => h.documentId)).toEqual(
        expect.arrayContaining([legacy[0]!.document.id, legacy[1]!.document.id]),
      );
      expect((await search.textCandidates('gadgets', NO_TAGS, 5)).map((h) => h.id)).toEqual([(await store.chunks(current.document.id))!.items[0]!.id]);
    });

    // Regression: candidateK chunks that share passages gave fewer than topK hits (1 of 3 here).
    it('vector mode returned one hit for topK 3 when its 3 nearest chunks shared a passage', async () => {
      for (let d = 0; d < 4; d++) {
        const text = Array.from({ length: 8 }, (_, i) => `Document ${d} paragraph ${i} says something about widgets.`).join('\n\n');
        await store.ingest({ title: `Doc ${d}`, content: text, format: 'text', chunking: { maxTokens: 12, overlapTokens: 0 } });
      }
      const [{ n }] = (await queryRows<{ n: number }>(db(), sql`SELECT count(*)::int AS n FROM chunks`)) as [{ n: number }];
      expect(Number(n)).toBeGreaterThanOrEqual(16);
      for (const mode of ['vector', 'hybrid', 'text'] as const) {
        const hits = await search.search('paragraph about widgets', { mode, topK: 3, candidateK: 3 });
        expect(hits, mode).toHaveLength(3);
        expect(new Set(hits.map((h) => h.documentId)).size, mode).toBe(3);
      }
    });

    it('refuses to mix postings of two analyzers', async () => {
      await store.ingest({ content: 'Stemmed postings here.', format: 'text' });
      const other = createAnalyzer({ stem: false });
      const mismatched = createDocumentStore({ db: db(), embedder, analyzer: other });
      await expect(mismatched.ingest({ content: 'Unstemmed postings.', format: 'text' })).rejects.toBeInstanceOf(AnalyzerMismatchError);
      await expect(createDocumentSearch({ db: db(), embedder, analyzer: other }).textCandidates('postings', NO_TAGS, 5)).rejects.toBeInstanceOf(
        AnalyzerMismatchError,
      );
    });

    it('hybrid search keeps hits found by only one retriever, with citation fields', async () => {
      // Vectors chosen by hand: the query sits on the zebra document, which shares no word with it.
      const axis = (i: number) => Array.from({ length: 64 }, (_, j) => (j === i ? 1 : 0));
      const geometric: Embedder = {
        ...createHashEmbedder(64),
        embed: async (texts) => texts.map((t) => (t === 'alpha' || t.includes('zebra') ? axis(0) : axis(1))),
      };
      const geoStore = createDocumentStore({ db: db(), embedder: geometric });
      const geoSearch = createDocumentSearch({ db: db(), embedder: geometric, weights: { vector: 1, text: 1 } });
      const lexicalDoc = await geoStore.ingest({ title: 'Letters', content: 'alpha beta gamma delta', format: 'text' });
      const vectorDoc = await geoStore.ingest({ title: 'Animals', content: 'zebra stripes on the savanna', format: 'text' });

      const hits = await geoSearch.search('alpha', { topK: 5, candidateK: 1 });
      expect(hits).toHaveLength(2);
      const byDoc = new Map(hits.map((h) => [h.documentId, h]));
      expect(byDoc.get(lexicalDoc.document.id)).toMatchObject({
        title: 'Letters',
        ranks: { vector: null, text: 1 },
        headingPath: [],
        start: 0,
        end: 22,
        snippet: 'alpha beta gamma delta',
      });
      expect(byDoc.get(vectorDoc.document.id)).toMatchObject({ title: 'Animals', ranks: { vector: 1, text: null } });
      for (const hit of hits) expect(hit.chunkId).toMatch(/^[0-9a-f-]{36}$/);

      expect((await geoSearch.search('alpha', { mode: 'text' })).map((h) => h.documentId)).toEqual([lexicalDoc.document.id]);
      expect((await geoSearch.search('alpha', { mode: 'vector', topK: 1 })).map((h) => h.documentId)).toEqual([vectorDoc.document.id]);
      const reranked = await geoSearch.search('alpha', { reranker: 'lexical', topK: 2 });
      expect(reranked[0]!.documentId).toBe(lexicalDoc.document.id);
      expect(reranked[0]!.rerankScore).toBeGreaterThan(0);
    });

    it('applies tag filters inside both candidate queries', async () => {
      for (let i = 0; i < 12; i++) {
        await store.ingest({ content: `Solar panels and solar power, report ${i}: solar solar energy.`, format: 'text', tags: ['common'] });
      }
      const rare = await store.ingest({ content: 'A brief note that mentions solar once, among other things.', format: 'text', tags: ['rare', 'extra'] });
      const rareChunk = (await store.chunks(rare.document.id))!.items[0]!.id;

      const filter = { tagsAny: ['rare'], tagsAll: [], tagsNone: [] };
      expect((await search.textCandidates('solar power', filter, 1)).map((h) => h.id)).toEqual([rareChunk]);
      const [vector] = await embedder.embed(['Solar panels and solar power']);
      expect((await search.vectorCandidates(vector!, filter, 1)).map((h) => h.id)).toEqual([rareChunk]);
      // Unfiltered, a candidate list of 3 would not reach the rare chunk at all.
      expect((await search.textCandidates('solar power', NO_TAGS, 3)).map((h) => h.id)).not.toContain(rareChunk);

      for (const mode of ['hybrid', 'vector', 'text'] as const) {
        const hits = await search.search('solar power', { mode, topK: 3, candidateK: 3, tagsAll: ['RARE', 'extra'] });
        expect(hits.map((h) => h.chunkId)).toEqual([rareChunk]);
        const excluded = await search.search('solar power', { mode, topK: 20, candidateK: 20, tagsNone: ['common'] });
        expect(excluded.map((h) => h.chunkId)).toEqual([rareChunk]);
      }
      const listed = await store.list({ tagsAny: ['rare'] });
      expect(listed.items.map((d) => d.id)).toEqual([rare.document.id]);
      const page = await store.list({ tagsAll: ['common'], limit: 5 });
      expect(page.items).toHaveLength(5);
      const next = await store.list({ tagsAll: ['common'], limit: 50, cursor: page.nextCursor! });
      expect(next.items).toHaveLength(7);
      expect(next.nextCursor).toBeNull();
    });
  });
}
