import { expect, it } from 'vitest';
import { InvalidCursorError } from '../../../src/retrieval/cursor.js';
import type { MemoryStoreFixture } from './memory-store-fixture.js';

/** Saves, gets, lists, filters and tags: the store as a keyed record of memories. Registered inside the MemoryStore contract's `describe`. */
export function memoryStoreCrudCases(f: MemoryStoreFixture) {
  const { store, embedder } = f;
  it('saves, gets and deletes a memory', async () => {
    const saved = await store().save({ key: 'k1', content: 'Alice likes green tea', tags: ['Pref'], metadata: { source: 'chat' } });
    expect(saved.created).toBe(true);
    expect(saved.reembedded).toBe(true);
    expect(saved.memory).toMatchObject({ key: 'k1', content: 'Alice likes green tea', tags: ['pref'], metadata: { source: 'chat' }, agentId: 'default' });
    expect(await store().get('k1')).toMatchObject({ key: 'k1', content: 'Alice likes green tea' });
    expect(await store().delete('k1')).toBe(true);
    expect(await store().delete('k1')).toBe(false);
    expect(await store().get('k1')).toBeNull();
  });

  it('upserts by (agent, key) and re-embeds only when the content changed', async () => {
    await store().save({ key: 'up', content: 'first version' });
    const before = embedder.texts;
    const same = await store().save({ key: 'up', content: 'first version', tags: ['x'] });
    expect(same).toMatchObject({ created: false, reembedded: false });
    expect(same.memory.tags).toEqual(['x']);
    expect(embedder.texts).toBe(before);
    const changed = await store().save({ key: 'up', content: 'second version' });
    expect(changed).toMatchObject({ created: false, reembedded: true });
    expect(embedder.texts).toBe(before + 1);
    expect(changed.memory.updatedAt.getTime()).toBeGreaterThanOrEqual(changed.memory.createdAt.getTime());
    const [hit] = await store().search('second version', { topK: 1, mode: 'vector' });
    expect(hit?.memory.key).toBe('up');
    expect(hit!.score).toBeCloseTo(1, 5);
  });

  it('normalises tags: trimmed, case-folded, deduplicated', async () => {
    const { memory } = await store().save({ key: 'tags', content: 'tag normalisation', tags: ['  Work ', 'WORK', 'Ünïcode', ''], agentId: 'tagger' });
    expect(memory.tags).toEqual(['work', 'ünïcode']);
    const hits = await store().search('tag normalisation', { agentId: 'tagger', tagsAll: [' WORK'] });
    expect(hits.map((h) => h.memory.key)).toEqual(['tags']);
  });

  it('keeps agents apart', async () => {
    await store().save({ key: 'same', content: 'agent one secret', agentId: 'one' });
    await store().save({ key: 'same', content: 'agent two secret', agentId: 'two' });
    expect((await store().get('same', { agentId: 'one' }))?.content).toBe('agent one secret');
    expect((await store().get('same', { agentId: 'two' }))?.content).toBe('agent two secret');
    const hits = await store().search('secret', { agentId: 'one', topK: 10 });
    expect(hits.map((h) => h.memory.content)).toEqual(['agent one secret']);
  });

  it('filters by tagsAny, tagsAll and tagsNone inside the query', async () => {
    const agentId = 'filters';
    await store().save({ agentId, key: 'a', content: 'apple pie recipe', tags: ['food', 'dessert'] });
    await store().save({ agentId, key: 'b', content: 'apple stock price', tags: ['finance'] });
    await store().save({ agentId, key: 'c', content: 'apple orchard visit', tags: ['food', 'travel'] });
    const keys = async (o: object) => (await store().search('apple', { agentId, topK: 10, ...o })).map((h) => h.memory.key).sort();
    expect(await keys({})).toEqual(['a', 'b', 'c']);
    expect(await keys({ tagsAny: ['finance', 'travel'] })).toEqual(['b', 'c']);
    expect(await keys({ tagsAll: ['food', 'travel'] })).toEqual(['c']);
    expect(await keys({ tagsNone: ['food'] })).toEqual(['b']);
    expect(await keys({ tagsAny: ['food'], tagsNone: ['dessert'] })).toEqual(['c']);
    expect(await keys({ tagsAny: ['nope'] })).toEqual([]);
  });

  it('orders hits by score and honours minScore', async () => {
    const agentId = 'scores';
    await store().save({ agentId, key: 'exact', content: 'red fox jumps' });
    await store().save({ agentId, key: 'partial', content: 'red car parks' });
    await store().save({ agentId, key: 'none', content: 'blue whale sings' });
    const hits = await store().search('red fox jumps', { agentId, topK: 3 });
    expect(hits[0]?.memory.key).toBe('exact');
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
    const strict = await store().search('red fox jumps', { agentId, minScore: 0.99, mode: 'vector' });
    expect(strict.map((h) => h.memory.key)).toEqual(['exact']);
    // In hybrid mode minScore bounds the vector side only: "red" still finds the car by BM25.
    const hybrid = await store().search('red fox jumps', { agentId, minScore: 0.99 });
    expect(hybrid.map((h) => [h.memory.key, h.ranks])).toEqual([
      ['exact', { vector: 1, text: 1 }],
      ['partial', { vector: null, text: 2 }],
    ]);
  });

  it('lists with cursor pagination, each memory exactly once', async () => {
    const agentId = 'pager';
    for (let i = 0; i < 23; i++) await store().save({ agentId, key: `p${i}`, content: `page item ${i}`, tags: i % 2 ? ['odd'] : ['even'] });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store().list({ agentId, limit: 5, cursor });
      seen.push(...page.items.map((m) => m.key));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toHaveLength(23);
    expect(new Set(seen).size).toBe(23);
    const odd = await store().list({ agentId, tagsAny: ['odd'], limit: 100 });
    expect(odd.items).toHaveLength(11);
    expect(odd.nextCursor).toBeNull();
    await expect(store().list({ agentId, cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(InvalidCursorError);
  });

  it('counts tags and deletes by tag', async () => {
    const agentId = 'tagcount';
    await store().save({ agentId, key: '1', content: 'one', tags: ['a', 'b'] });
    await store().save({ agentId, key: '2', content: 'two', tags: ['a'] });
    await store().save({ agentId, key: '3', content: 'three', tags: ['c'] });
    expect(await store().tagCounts({ agentId })).toEqual([
      { tag: 'a', count: 2 },
      { tag: 'b', count: 1 },
      { tag: 'c', count: 1 },
    ]);
    await expect(store().deleteByTags({ agentId, tagsNone: ['a'] })).rejects.toThrow(RangeError);
    expect(await store().deleteByTags({ agentId, tagsAny: ['A'] })).toBe(2);
    expect((await store().list({ agentId })).items.map((m) => m.key)).toEqual(['3']);
  });

  it('stores tags and keys that look like SQL or array syntax verbatim', async () => {
    const agentId = 'quoting';
    const tags = ['a,b', '{x}', 'quote"d', "o'reilly", 'back\\slash', "'); DROP TABLE memories; --"];
    await store().save({ agentId, key: "k'; --", content: 'odd tags', tags });
    const hits = await store().search('odd tags', { agentId, tagsAll: tags });
    expect(hits).toHaveLength(1);
    expect(hits[0]!.memory.tags.sort()).toEqual(tags.map((t) => t.toLowerCase()).sort());
    expect(await store().get("k'; --", { agentId })).not.toBeNull();
  });
}
