import { describe, expect, it } from 'vitest';
import { citedIds, extractCitations } from '../../src/chat/citations.js';
import { SourceList, numberedAsCited } from '../../src/chat/sources.js';

function sources() {
  const list = new SourceList();
  const now = new Date(0);
  list.addMemory({
    memory: {
      key: 'tea',
      content: 'Alice prefers green tea',
      tags: [],
      metadata: {},
      agentId: 'a',
      userId: null,
      sources: [{ actor: 'extraction', conversationId: 'c-1', turn: 3, quote: { text: 'I prefer green tea', start: 0, end: 18 }, at: now }],
      validFrom: null,
      validUntil: null,
      validTo: null,
      expiresAt: null,
      status: 'active',
      quarantineReasons: [],
      createdAt: now,
      updatedAt: now,
    },
    score: 0.9,
  });
  list.addDocument({
    documentId: 'doc',
    title: 'Handbook',
    chunkId: 'doc#3',
    headingPath: ['Benefits', 'Leave'],
    start: 100,
    end: 180,
    text: `Employees get ${'many '.repeat(80)}days of leave.`,
    score: 3,
  });
  list.addTurn({
    conversationId: '0b5b8f47-6d0e-4d69-9a57-2f6f0e6a7c11',
    turn: 2,
    question: 'My locker code is 4512.',
    answer: 'Noted.',
    at: new Date('2026-05-12T09:00:00Z'),
    agentId: 'a',
    userId: 'u-1',
    score: 0.4,
    ranks: { vector: 1, text: null },
  });
  return list.all();
}

describe('citedIds', () => {
  it('reads [n], [n][m] and [n, m] in first-mention order, once each', () => {
    expect(citedIds('A [2]. B [1][2]. C [3, 1].')).toEqual([2, 1, 3]);
    expect(citedIds('no citations here [x] [ ]')).toEqual([]);
  });
});

describe('extractCitations', () => {
  it('maps markers to memories and document chunks, ignoring unknown numbers', () => {
    const citations = extractCitations('Leave is generous [2]. Alice drinks green tea [1]. Unknown [7].', sources());
    expect(citations).toHaveLength(2);
    expect(citations[0]).toMatchObject({
      id: 2,
      kind: 'document',
      documentId: 'doc',
      title: 'Handbook',
      chunkId: 'doc#3',
      headingPath: ['Benefits', 'Leave'],
      start: 100,
      end: 180,
    });
    expect(citations[0]!.snippet.length).toBeLessThanOrEqual(241);
    expect(citations[0]!.snippet.endsWith('…')).toBe(true);
    // A memory's citation carries where it came from, so a client can open that turn.
    expect(citations[1]).toEqual({
      id: 1,
      kind: 'memory',
      key: 'tea',
      agentId: 'a',
      snippet: 'Alice prefers green tea',
      sources: [
        { actor: 'extraction', conversationId: 'c-1', turn: 3, quote: { text: 'I prefer green tea', start: 0, end: 18 }, at: new Date(0).toISOString() },
      ],
    });
  });

  it('cites a past turn by its conversation and number', () => {
    expect(extractCitations('You told me [3].', sources())).toEqual([
      { id: 3, kind: 'turn', conversationId: '0b5b8f47-6d0e-4d69-9a57-2f6f0e6a7c11', turn: 2, snippet: 'User: My locker code is 4512. Assistant: Noted.' },
    ]);
  });
});

describe('numberedAsCited', () => {
  it('numbers the cited sources from 1 in the order cited, then the rest in recall order, leaving the list as it was', () => {
    const recalled = sources();
    const numbered = numberedAsCited(recalled, [3, 2]);
    expect(numbered.map((s) => [s.id, s.kind])).toEqual([
      [1, 'turn'],
      [2, 'document'],
      [3, 'memory'],
    ]);
    expect(recalled.map((s) => s.id)).toEqual([1, 2, 3]);
    expect(numberedAsCited(recalled, []).map((s) => [s.id, s.kind])).toEqual(recalled.map((s) => [s.id, s.kind]));
  });
});
