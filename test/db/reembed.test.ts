import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { reembedAll } from '../../src/db/reembed.js';
import { VectorSpaceMismatchError, ensureVectorSpace, readSpace } from '../../src/db/vector-space.js';
import { createDocumentStore } from '../../src/documents/document-store.js';
import { createDocumentSearch } from '../../src/documents/document-search.js';
import { createPgConversationStore } from '../../src/conversations/pg-conversation-store.js';
import { createTurnIndex } from '../../src/conversations/turn-index.js';
import { createTurnSearch } from '../../src/conversations/turn-search.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';

describe('reembedAll', () => {
  let database: Database;
  const oldEmbedder = createHashEmbedder(64);
  const newEmbedder = createHashEmbedder(32, 'test:new-32');

  beforeAll(async () => {
    database = await openDatabase({});
    await ensureVectorSpace(database.db, oldEmbedder);
    const store = createPgMemoryStore({ db: database.db, embedder: oldEmbedder });
    for (let i = 0; i < 150; i++) await store.save({ key: `k${i}`, content: `memory number ${i} about topic ${i % 7}` });
    await createDocumentStore({ db: database.db, embedder: oldEmbedder }).ingest({ title: 'Manual', content: 'Pumps move water uphill.', format: 'text' });
    const conversations = createPgConversationStore({ db: database.db, turnIndex: createTurnIndex({ db: database.db, embedder: oldEmbedder }) });
    const id = '5a0d6c0e-1d64-4c4e-9b5e-3f1f2a9f0c01';
    await conversations.appendTurn({
      id,
      agentId: 'default',
      messages: [{ message: { role: 'user', content: 'Where is the pump?' } }, { message: { role: 'assistant', content: 'In the cellar.', toolCalls: [] } }],
    });
    await createTurnIndex({ db: database.db, embedder: oldEmbedder }).indexConversation(id);
  });
  afterAll(() => database.close());

  it('moves every vector to the new space and records it', async () => {
    await expect(ensureVectorSpace(database.db, newEmbedder)).rejects.toBeInstanceOf(VectorSpaceMismatchError);
    const progress: number[] = [];
    const summary = await reembedAll(database.db, newEmbedder, { batchSize: 40, onProgress: (p) => progress.push(p.done) });
    expect(summary).toEqual([
      { table: 'memories', rows: 150 },
      { table: 'chunks', rows: 1 },
      { table: 'turns', rows: 1 },
    ]);
    expect(progress).toEqual([40, 80, 120, 150, 1, 1]);
    // A chunk is re-embedded as the ingest embedded it: title, blank line, text.
    const [hybrid] = await createDocumentSearch({ db: database.db, embedder: newEmbedder }).search('Manual Pumps move water uphill.', {
      mode: 'vector',
      topK: 1,
    });
    expect(hybrid!.score).toBeCloseTo(1, 5);
    expect(await readSpace(database.db, 'memories')).toEqual({ embedderId: 'test:new-32', dimensions: 32 });
    expect(await readSpace(database.db, 'turns')).toEqual({ embedderId: 'test:new-32', dimensions: 32 });
    // A turn is re-embedded from the text it was embedded from: its date, question and answer.
    const [turn] = (
      await createTurnSearch({ db: database.db, embedder: newEmbedder }).search('Where is the pump? In the cellar.', {
        agentId: 'default',
        mode: 'vector',
        topK: 1,
      })
    ).hits;
    expect(turn).toMatchObject({ question: 'Where is the pump?', answer: 'In the cellar.' });
    await ensureVectorSpace(database.db, newEmbedder);
    const store = createPgMemoryStore({ db: database.db, embedder: newEmbedder });
    const [hit] = await store.search('memory number 42 about topic 0', { topK: 1, mode: 'vector' });
    expect(hit?.memory.key).toBe('k42');
    expect(hit!.score).toBeCloseTo(1, 5);
  });

  it('leaves the store as it was when the embedder fails part-way', async () => {
    let calls = 0;
    const failing = createHashEmbedder(16, 'test:failing-16');
    const inner = failing.embed.bind(failing);
    failing.embed = async (texts: string[]) => {
      if (++calls === 3) throw new Error('embedder crashed');
      return inner(texts);
    };
    await expect(reembedAll(database.db, failing, { batchSize: 40 })).rejects.toThrow('embedder crashed');
    expect(await readSpace(database.db, 'memories')).toEqual({ embedderId: 'test:new-32', dimensions: 32 });
    const store = createPgMemoryStore({ db: database.db, embedder: newEmbedder });
    expect(await store.search('memory number 7 about topic 0', { topK: 1 })).toHaveLength(1);
  });
});
