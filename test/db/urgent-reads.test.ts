import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.js';
import { inUrgentReads } from '../../src/db/urgent-reads.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { createDocumentSearch } from '../../src/documents/document-search.js';
import { createDocumentStore } from '../../src/documents/document-store.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { createTurnSearch } from '../../src/conversations/turn-search.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';

describe("a search's statements, on PGlite's shared connection", () => {
  let database: Database;
  /** Whether each statement issued since the last reset ran as an urgent read. */
  let urgency: boolean[] = [];
  const embedder = createHashEmbedder(64);

  beforeAll(async () => {
    database = await openDatabase({ dataDir: 'memory://' });
    await ensureVectorSpace(database.db, embedder);
    const client = (database.db as unknown as { $client: PGlite }).$client;
    const query = client.query.bind(client);
    const transaction = client.transaction.bind(client);
    client.query = ((...args: Parameters<typeof query>) => {
      urgency.push(inUrgentReads());
      return query(...args);
    }) as typeof client.query;
    client.transaction = ((...args: Parameters<typeof transaction>) => {
      urgency.push(inUrgentReads());
      return transaction(...args);
    }) as typeof client.transaction;
  });
  afterAll(async () => {
    await database.close();
  });

  it('marks every statement of a memory search as urgent, the rows read after fusion and a search as of a moment included, and none of a save', async () => {
    const store = createPgMemoryStore({ db: database.db, embedder });
    await store.save({ key: 'tea', content: 'Alice drinks green tea every afternoon', tags: ['drinks'] });
    urgency = [];
    // topK 20 fuses more candidates than the sides bring rows for: the rows are read after.
    const hits = await store.search('green tea', { mode: 'hybrid', topK: 20, tagsAll: ['drinks'] });
    expect(hits.map((h) => h.memory.key)).toEqual(['tea']);
    expect(urgency.length).toBeGreaterThanOrEqual(3);
    expect(urgency.every(Boolean)).toBe(true);
    urgency = [];
    const then = await store.search('green tea', { asOf: new Date(), tagsAll: ['drinks'] });
    expect(then.map((h) => h.memory.key)).toEqual(['tea']);
    expect(urgency.length).toBeGreaterThanOrEqual(3);
    expect(urgency.every(Boolean)).toBe(true);
    urgency = [];
    await store.save({ key: 'coffee', content: 'Bob takes his coffee black' });
    expect(urgency.some(Boolean)).toBe(false);
  });

  it('marks every statement of a turn search as urgent', async () => {
    const turns = createTurnSearch({ db: database.db, embedder });
    urgency = [];
    await turns.search('green tea', { agentId: 'default', mode: 'hybrid' });
    await turns.searchConversations('green tea', { agentId: 'default', mode: 'hybrid' });
    expect(urgency.length).toBeGreaterThanOrEqual(4);
    expect(urgency.every(Boolean)).toBe(true);
  });

  it("marks every statement of a document search as urgent, the passages' chunks included", async () => {
    const documents = createDocumentStore({ db: database.db, embedder });
    await documents.ingest({ content: 'The pump needs new valves every spring.', format: 'text' });
    const search = createDocumentSearch({ db: database.db, embedder });
    urgency = [];
    const hits = await search.search('valves', { mode: 'hybrid' });
    expect(hits).toHaveLength(1);
    expect(urgency.length).toBeGreaterThanOrEqual(3);
    expect(urgency.every(Boolean)).toBe(true);
  });
});
