import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApp, createTestContext } from '../http/http-test-context.js';
import type { DatabaseDriver, ProvisionedDatabase } from '../support/database-drivers.js';
import { type ListeningServer, listen } from './support/listening-server.js';
import { markerWord } from './support/marker-word.js';

const WRITERS = 50;

/**
 * 50 clients writing the same thing at once, through a listening server: the same memory key,
 * the same document, the same document source with different texts. Each race must end as if the
 * writes had run one after another: one row, one of the written values, and BM25 postings that
 * match it (text search finds the survivor by its own words only).
 */
export function concurrentWritesSuite(driver: DatabaseDriver) {
  describe('concurrent writes through a listening server', () => {
    let database: ProvisionedDatabase | undefined;
    let ctx: AppContext;
    let server: ListeningServer;

    beforeAll(async () => {
      database = await driver.provision();
      ctx = await createTestContext(database.env);
      server = await listen(createApp(ctx));
    });
    afterAll(async () => {
      await server?.close();
      await ctx?.close();
      await database?.release();
    });

    const all = <T>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));

    it(`${WRITERS} parallel saves of one memory key leave one memory, with one of the written contents and its postings`, async () => {
      const contentOf = (i: number) => `Race note ${markerWord(i)}: parallel writers share this key`;
      // PUT and POST alike: both are saves by key.
      const replies = await all(WRITERS, (i) =>
        i % 2 === 0
          ? server.send('PUT', '/v1/memories/race', { content: contentOf(i), tags: [`writer-${i}`] })
          : server.send('POST', '/v1/memories', { key: 'race', content: contentOf(i), tags: [`writer-${i}`] }),
      );
      expect(
        replies.map((r) => r.status).filter((s) => s !== 200 && s !== 201),
        JSON.stringify(replies.find((r) => r.status >= 300)?.body),
      ).toEqual([]);
      expect(replies.filter((r) => r.status === 201)).toHaveLength(1);

      const { body: stored } = await server.send('GET', '/v1/memories/race');
      const winner = Array.from({ length: WRITERS }, (_, i) => i).find((i) => contentOf(i) === stored.memory.content);
      expect(winner, `stored content ${JSON.stringify(stored.memory.content)} is none of the written ones`).toBeDefined();
      // Content and tags come from the same save.
      expect(stored.memory.tags).toEqual([`writer-${winner}`]);

      const list = await server.send('GET', '/v1/memories?limit=200');
      expect(list.body.items.map((m: { key: string }) => m.key)).toEqual(['race']);
      expect((await server.send('GET', '/v1/tags')).body.tags).toEqual([{ tag: `writer-${winner}`, count: 1 }]);

      const textHits = async (query: string) =>
        ((await server.send('POST', '/v1/memories/search', { query, mode: 'text', topK: 10 })).body.hits as { memory: { key: string } }[]).map(
          (h) => h.memory.key,
        );
      expect(await textHits('parallel writers')).toEqual(['race']);
      for (let i = 0; i < WRITERS; i++) {
        expect(await textHits(markerWord(i)), `text search for ${markerWord(i)} (writer ${i}; ${winner} won)`).toEqual(i === winner ? ['race'] : []);
      }
    });

    it(`${WRITERS} parallel ingestions of one document leave one document and one set of chunks`, async () => {
      const body = {
        title: 'Parallel ingestion',
        text: `# Parallel\n\nThe same document, ingested ${WRITERS} times at once, carries the marker ${markerWord(0)}.\n\n## Second part\n\nA second section, so that the document has several chunks to duplicate.`,
        format: 'markdown',
        maxTokens: 16,
        overlapTokens: 2,
      };
      const replies = await all(WRITERS, () => server.send('POST', '/v1/documents', body));
      expect(
        replies.map((r) => r.status).filter((s) => s !== 200 && s !== 201),
        JSON.stringify(replies.find((r) => r.status >= 300)?.body),
      ).toEqual([]);
      expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
      expect(replies.filter((r) => r.status === 200).map((r) => r.body.status)).toEqual(Array(WRITERS - 1).fill('unchanged'));
      const ids = new Set(replies.map((r) => r.body.document.id));
      expect(ids.size).toBe(1);
      const [id] = ids;

      const list = await server.send('GET', '/v1/documents?limit=200');
      expect(list.body.items.map((d: { id: string }) => d.id)).toEqual([id]);
      const document = (await server.send('GET', `/v1/documents/${id}`)).body.document;
      const chunks = (await server.send('GET', `/v1/documents/${id}/chunks?limit=1000`)).body.items as { text: string }[];
      expect(chunks.length).toBeGreaterThan(1);
      expect(chunks).toHaveLength(document.chunkCount);
      // One set: no chunk twice.
      expect(new Set(chunks.map((c) => c.text)).size).toBe(chunks.length);
      const hits = (await server.send('POST', '/v1/search', { query: markerWord(0), mode: 'text', topK: 50 })).body.hits as { documentId: string }[];
      expect(hits.length).toBe(chunks.filter((c) => c.text.includes(markerWord(0))).length);
      expect(new Set(hits.map((h) => h.documentId))).toEqual(new Set([id]));
      expect((await server.send('DELETE', `/v1/documents/${id}`)).status).toBe(204);
    });

    it(`${WRITERS} parallel ingestions of one source with different texts leave one document holding one of them`, async () => {
      const textOf = (i: number) =>
        `# Versions\n\nVersion ${markerWord(i)} of the shared source.\n\n## Tail\n\nEvery version has this tail section about sources.`;
      const replies = await all(WRITERS, (i) =>
        server.send('POST', '/v1/documents', {
          title: 'Versions',
          text: textOf(i),
          format: 'markdown',
          source: 'race://source',
          maxTokens: 16,
          overlapTokens: 2,
        }),
      );
      expect(
        replies.map((r) => r.status).filter((s) => s !== 200 && s !== 201),
        JSON.stringify(replies.find((r) => r.status >= 300)?.body),
      ).toEqual([]);
      expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
      expect(new Set(replies.filter((r) => r.status === 200).map((r) => r.body.status))).toEqual(new Set(['replaced']));
      const ids = new Set(replies.map((r) => r.body.document.id));
      expect(ids.size).toBe(1);
      const [id] = ids;

      expect((await server.send('GET', '/v1/documents?limit=200')).body.items.map((d: { id: string }) => d.id)).toEqual([id]);
      const chunks = (await server.send('GET', `/v1/documents/${id}/chunks?limit=1000`)).body.items as { text: string }[];
      const present = Array.from({ length: WRITERS }, (_, i) => i).filter((i) => chunks.some((c) => c.text.includes(markerWord(i))));
      expect(present, 'the chunks hold exactly one version').toHaveLength(1);
      const winner = present[0]!;
      for (let i = 0; i < WRITERS; i++) {
        const hits = (await server.send('POST', '/v1/search', { query: markerWord(i), mode: 'text', topK: 10 })).body.hits as { documentId: string }[];
        expect(hits.length > 0, `text search for version ${i} (${winner} won)`).toBe(i === winner);
      }
    });
  });
}
