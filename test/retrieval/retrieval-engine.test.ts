import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import type { MemoryStore } from '../../src/memory/memory-types.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { describeOnDrivers } from '../support/database-drivers.js';

/** The BM25 statement's mark: every shape of it reads the query's terms first. */
const TEXT_STATEMENT = 'weights AS MATERIALIZED';

describeOnDrivers('retrieval engine', (driver) => {
  let database: Database | undefined;
  let store: MemoryStore;
  const hash = createHashEmbedder(64);
  let textStatementsDone = 0;
  let embeddingsAsked = 0;
  let textDoneDuringEmbedding: boolean[] = [];

  /**
   * The hash embedder, holding a search's query until a text statement has finished or ten
   * seconds have passed (a cold statement on a busy machine), and recording which it was.
   */
  const slowEmbedder: Embedder = {
    id: hash.id,
    dimensions: hash.dimensions,
    maxInputTokens: hash.maxInputTokens,
    async embed(texts, options) {
      if (!options?.urgent) return hash.embed(texts, options);
      embeddingsAsked += 1;
      const before = textStatementsDone;
      const deadline = Date.now() + 10_000;
      while (textStatementsDone === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      textDoneDuringEmbedding.push(textStatementsDone > before);
      return hash.embed(texts, options);
    },
    close: () => hash.close(),
  };

  beforeAll(async () => {
    database = await driver.open();
    await ensureVectorSpace(database.db, slowEmbedder);
    // Both drivers' clients take the statement's text first, as a string or in a config object.
    type Queryable = { query: (...args: unknown[]) => Promise<unknown> };
    const counted = new WeakSet<Queryable>();
    const count = (client: Queryable) => {
      if (counted.has(client)) return;
      counted.add(client);
      const query = client.query.bind(client);
      client.query = async (...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
        const result = await query(...args);
        if (text?.includes(TEXT_STATEMENT)) textStatementsDone += 1;
        return result;
      };
    };
    const client = (database.db as unknown as { $client: Queryable }).$client;
    // On the server, each pooled connection as it is handed out: a prepared read takes one itself.
    if (client instanceof pg.Pool) client.on('acquire', (conn) => count(conn as unknown as Queryable));
    else count(client);
    store = createPgMemoryStore({ db: database.db, embedder: slowEmbedder });
    await store.save({ key: 'tea', content: 'Alice drinks green tea every afternoon' });
    await store.save({ key: 'coffee', content: 'Bob takes his coffee black' });
  });
  afterAll(async () => {
    await database?.close();
  });

  it('runs a hybrid search’s text statement while the query is embedded', async () => {
    textDoneDuringEmbedding = [];
    embeddingsAsked = 0;
    const hits = await store.search('green tea afternoon', { mode: 'hybrid', topK: 2 });
    expect(hits[0]?.memory.key).toBe('tea');
    expect(embeddingsAsked).toBe(1);
    expect(textDoneDuringEmbedding).toEqual([true]);
  });
});
