import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { memories } from '../../src/db/schema/index.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { MEMORY_CORPUS, memoryFilter } from '../../src/memory/memory-corpus.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import type { Corpus } from '../../src/retrieval/corpus.js';
import type { FusionWeights } from '../../src/retrieval/fusion-weights.js';
import { type RetrievalEngine, createRetrievalEngine } from '../../src/retrieval/retrieval-engine.js';
import type { SignalQuery } from '../../src/retrieval/signal.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { describeOnDrivers } from '../support/database-drivers.js';

// A corpus's own signal is one entry in its descriptor and one weight: the engine runs it in
// hybrid mode beside vector and text and fuses its ranks by that weight.
describeOnDrivers('a signal a corpus declares', (driver) => {
  let database: Database | undefined;
  let engine: RetrievalEngine;
  let ids: Record<string, string>;
  const asked: Omit<SignalQuery, 'db'>[] = [];
  // The third signal: the memories pinned, best first, whatever the query says.
  const pinned: Corpus = {
    ...MEMORY_CORPUS,
    signals: {
      pinned: async ({ db: _db, ...query }) => {
        asked.push(query);
        return [ids.bike!, ids.kettle!];
      },
    },
  };
  const hash = createHashEmbedder(64);
  const filter = () => memoryFilter('default', {});
  const search = (corpus: Corpus, weights: FusionWeights, mode: 'hybrid' | 'text' = 'hybrid') =>
    engine.search(corpus, 'green tea', { mode, filter: filter(), topK: 4, candidateK: 10, weights });

  beforeAll(async () => {
    database = await driver.open();
    await ensureVectorSpace(database.db, hash);
    const store = createPgMemoryStore({ db: database.db, embedder: hash });
    for (const [key, content] of [
      ['tea', 'Alice drinks green tea every afternoon'],
      ['matcha', 'Green tea powder whisked into matcha'],
      ['kettle', 'The kettle whistles when the water boils'],
      ['bike', 'Bob rides his bike to work'],
    ] as const) {
      await store.save({ key, content });
    }
    const rows = await database.db.select({ id: memories.id, key: memories.key }).from(memories);
    ids = Object.fromEntries(rows.map((r) => [r.key, r.id]));
    engine = createRetrievalEngine({ db: database.db, embedder: hash });
  });
  afterAll(async () => {
    await database?.close();
  });

  it('fuses the declared signal by its weight, with its ranks beside the engine’s', async () => {
    asked.length = 0;
    const k = 60;
    const weights = { signals: { vector: 1, text: 1, pinned: 10 }, k };
    const hits = await search(pinned, weights);
    expect(asked).toEqual([{ query: 'green tea', filter: filter(), limit: 10 }]);
    // Its first pick leads: 10 / 61 outweighs any unit's two shares of 1 / 61.
    expect(hits[0]!.id).toBe(ids.bike);
    const byId = new Map(hits.map((h) => [h.id, h]));
    expect(byId.get(ids.bike!)!.ranks.pinned).toBe(1);
    expect(byId.get(ids.kettle!)!.ranks.pinned).toBe(2);
    expect(byId.get(ids.tea!)!.ranks.pinned).toBeNull();
    for (const hit of hits) {
      const share = (weight: number, rank: number | null | undefined) => (rank ? weight / (k + rank) : 0);
      expect(hit.score).toBeCloseTo(share(1, hit.ranks.vector) + share(1, hit.ranks.text) + share(10, hit.ranks.pinned), 12);
    }
  });

  it('leaves it out at weight 0 (or unnamed), and in the one-signal modes: the ranking is the engine’s own', async () => {
    const plain = { signals: { vector: 1, text: 1 }, k: 60 };
    const expected = await search(MEMORY_CORPUS, plain);
    asked.length = 0;
    expect(await search(pinned, { ...plain, signals: { ...plain.signals, pinned: 0 } })).toEqual(expected);
    expect(await search(pinned, plain)).toEqual(expected);
    expect(await search(pinned, { ...plain, signals: { ...plain.signals, pinned: 10 } }, 'text')).toEqual(await search(MEMORY_CORPUS, plain, 'text'));
    expect(asked).toEqual([]);
    expect(expected.every((h) => !('pinned' in h.ranks))).toBe(true);
  });
});
