import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { evaluate, loadCorpus, loadQrels, loadQueries, ndcgAtK, recallAtK } from '../../scripts/bench/lib/beir.js';

describe('BEIR metrics', () => {
  it('computes nDCG@10 with linear gains and a log2 discount', () => {
    const judged = new Map([
      ['d1', 2],
      ['d2', 1],
      ['d3', 0],
    ]);
    // d2 at rank 1, d1 at rank 3: DCG = 1/log2(2) + 2/log2(4); ideal = 2/log2(2) + 1/log2(3).
    const expected = (1 + 2 / 2) / (2 + 1 / Math.log2(3));
    expect(ndcgAtK(['d2', 'x', 'd1', 'd3'], judged, 10)).toBeCloseTo(expected, 12);
    expect(ndcgAtK(['d1', 'd2'], judged, 10)).toBeCloseTo(1, 12);
    expect(ndcgAtK(['x', 'y'], judged, 10)).toBe(0);
    // Only the top k count.
    expect(ndcgAtK(['x', 'd1'], judged, 1)).toBe(0);
  });

  it('computes Recall@k over the relevant documents only', () => {
    const judged = new Map([
      ['d1', 1],
      ['d2', 3],
      ['d3', 0],
    ]);
    expect(recallAtK(['d3', 'd1'], judged, 100)).toBe(0.5);
    expect(recallAtK(['d1', 'x', 'd2'], judged, 2)).toBe(0.5);
    expect(recallAtK([], new Map([['d', 0]]), 100)).toBe(0);
  });

  it('averages over judged queries, counting a query without a run as a miss', () => {
    const qrels = new Map([
      ['q1', new Map([['d1', 1]])],
      ['q2', new Map([['d2', 1]])],
      ['q3', new Map([['d3', 0]])],
    ]);
    const metrics = evaluate(new Map([['q1', ['d1']]]), qrels);
    expect(metrics).toEqual({ ndcgAt10: 0.5, recallAt100: 0.5, queries: 2 });
    // BEIR drops a retrieved document whose id is the query's own.
    expect(evaluate(new Map([['q1', ['q1', 'd1']]]), new Map([['q1', new Map([['d1', 1]])]])).ndcgAt10).toBe(1);
  });
});

describe('BEIR loaders', () => {
  const dir = mkdtempSync(join(tmpdir(), 'beir-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads corpus, queries and qrels in both folder layouts', async () => {
    writeFileSync(join(dir, 'corpus.jsonl'), '{"_id": "1", "title": "T", "text": "body"}\n{"_id": 2, "text": "no title"}\n\n');
    writeFileSync(join(dir, 'queries-train.jsonl'), '{"_id": "q1", "text": "what?"}\n');
    writeFileSync(join(dir, 'queries.jsonl'), '{"_id": "q9", "text": "all"}\n');
    writeFileSync(join(dir, 'qrels-train.tsv'), 'query-id\tcorpus-id\tscore\nq1\t1\t1\nq1\t2\t2\n');
    mkdirSync(join(dir, 'qrels'));
    writeFileSync(join(dir, 'qrels', 'test.tsv'), 'query-id\tcorpus-id\tscore\r\nq9\t2\t1\r\n');

    expect(await loadCorpus(dir)).toEqual([
      { id: '1', title: 'T', text: 'body' },
      { id: '2', title: '', text: 'no title' },
    ]);
    expect(await loadQueries(dir, 'train')).toEqual([{ id: 'q1', text: 'what?' }]);
    expect(await loadQueries(dir)).toEqual([{ id: 'q9', text: 'all' }]);
    expect(await loadQrels(dir, 'train')).toEqual(
      new Map([
        [
          'q1',
          new Map([
            ['1', 1],
            ['2', 2],
          ]),
        ],
      ]),
    );
    expect(await loadQrels(dir, 'test')).toEqual(new Map([['q9', new Map([['2', 1]])]]));
    await expect(loadQrels(dir, 'dev')).rejects.toThrow(/none of these files exists/);
  });
});
