import { expect, it } from 'vitest';
import type { Embedder } from '../../../src/embeddings/embedder.js';
import { createDocumentStore } from '../../../src/documents/document-store.js';
import { createHashEmbedder } from '../../../testkit/hash-embedder.js';
import { GUIDE } from './widget-guide.js';
import { NO_TAGS, type DocumentStoreFixture } from './document-store-fixture.js';

/** Ingest: chunks, offsets and input limits, and what an identical or re-sourced document does. Registered inside the document store contract's `describe`. */
export function documentIngestCases(f: DocumentStoreFixture) {
  const { db, embedder, store, search, expectStatsConsistent, counts } = f;
  it('ingests Markdown into chunks with heading paths and exact offsets', async () => {
    const { document, status } = await store().ingest({
      content: GUIDE,
      format: 'markdown',
      tags: ['Docs'],
      metadata: { v: 1 },
      chunking: { maxTokens: 24, overlapTokens: 4 },
    });
    expect(status).toBe('created');
    expect(document).toMatchObject({ title: 'Widget Guide', format: 'markdown', tags: ['docs'], metadata: { v: 1 }, source: null });
    expect(document.chunkCount).toBeGreaterThan(2);
    const text = (await store().getText(document.id))!;
    const page = (await store().chunks(document.id))!;
    expect(page.items).toHaveLength(document.chunkCount);
    for (const chunk of page.items) {
      expect(text.slice(chunk.start, chunk.end)).toBe(chunk.text);
      expect(chunk.tokenCount).toBeLessThanOrEqual(24);
    }
    expect(page.items.some((c) => c.headingPath.join('/') === 'Widget Guide/Limits')).toBe(true);
    const paged = (await store().chunks(document.id, { limit: 2 }))!;
    expect(paged.items.map((c) => c.index)).toEqual([0, 1]);
    const rest = (await store().chunks(document.id, { limit: 100, cursor: paged.nextCursor! }))!;
    expect(rest.items[0]!.index).toBe(2);
    await expectStatsConsistent();
  });

  it('a title cut at 1,000 characters split an astral character into U+FFFD', async () => {
    const title = `${'t'.repeat(999)}😀 and more`;
    const { document } = await store().ingest({ title, content: 'Emoji titles are cut whole.', format: 'text' });
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
    const { approximateTokenCount } = await import('../../../src/text/approximate-token-count.js');
    for (const text of seen) expect(approximateTokenCount(text.replace('\n\n', ' '))).toBeLessThanOrEqual(20);
    expect(seen.every((t) => t.startsWith('Tokens\n\n'))).toBe(true);
  });

  it('returns the existing document for identical content, without embedding or writing', async () => {
    const first = await store().ingest({ content: 'Alpha beta gamma.\n', format: 'text' });
    const before = { calls: embedder.calls, counts: await counts() };
    const again = await store().ingest({ content: '\r\nAlpha beta gamma.', format: 'text', title: 'Other title', source: 'elsewhere' });
    expect(again.status).toBe('unchanged');
    expect(again.document.id).toBe(first.document.id);
    expect(embedder.calls).toBe(before.calls);
    expect(await counts()).toEqual(before.counts);
  });

  it('replaces the chunks of a document re-ingested from the same source', async () => {
    const first = await store().ingest({ content: 'The old manual talks about pumps and valves.', format: 'text', source: 'file:///manual.txt' });
    await store().ingest({ content: 'Another document about valves.', format: 'text' });
    const second = await store().ingest({ content: 'The new manual talks about turbines only.', format: 'text', source: 'file:///manual.txt', tags: ['v2'] });
    expect(second.status).toBe('replaced');
    expect(second.document.id).toBe(first.document.id);
    expect(second.document.tags).toEqual(['v2']);
    const chunks = (await store().chunks(first.document.id))!.items;
    expect(chunks.map((c) => c.text)).toEqual(['The new manual talks about turbines only.']);
    expect(await search().textCandidates('pumps', NO_TAGS, 10)).toEqual([]);
    expect(await search().textCandidates('turbines', NO_TAGS, 10)).toHaveLength(1);
    expect((await store().list()).items).toHaveLength(2);
    await expectStatsConsistent();
  });
}
