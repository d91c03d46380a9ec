import { describe, expect, it } from 'vitest';
import { MAX_SUMMARY_LAYERS, type TurnDigest, layersTokens, updateStructuralSummary } from '../../src/compaction/structural-summary.js';
import { createFakeSummarizer } from './fake-summarizer.js';

const digests = (from: number, to: number): TurnDigest[] =>
  Array.from({ length: to - from + 1 }, (_, i) => ({
    turn: from + i,
    text:
      from + i === 3 ? 'User: please remember that the wifi password is hunter2.' : `User asked about topic ${from + i}. ${'Details follow here. '.repeat(20)}`,
  }));

describe('updateStructuralSummary', () => {
  it('graduates long material: brief for the oldest, detailed for the newest', async () => {
    const summarizer = createFakeSummarizer();
    const { summary, llmCalls } = await updateStructuralSummary(undefined, digests(2, 40), { summarizer, budgetTokens: 400, maxRequestTokens: 8_000 });
    expect(summary.layers.map((l) => l.level)).toEqual(['brief', 'medium', 'detailed']);
    expect(summary).toMatchObject({ fromTurn: 2, throughTurn: 40 });
    expect(summary.layers[0]!.fromTurn).toBe(2);
    expect(summary.layers[1]!.fromTurn).toBe(summary.layers[0]!.throughTurn + 1);
    expect(llmCalls).toBe(3);
    expect(summary.layers[0]!.text).toContain('remember that the wifi password is hunter2');
    expect(layersTokens(summary.layers)).toBeLessThanOrEqual(400);
  });

  it('extends an existing summary with new turns only, merging the oldest layers to stay within three', async () => {
    const summarizer = createFakeSummarizer();
    const first = await updateStructuralSummary(undefined, digests(2, 40), { summarizer, budgetTokens: 400, maxRequestTokens: 3_000 });
    summarizer.requests.length = 0;
    const next = await updateStructuralSummary(first.summary, digests(2, 50), { summarizer, budgetTokens: 400, maxRequestTokens: 3_000 });
    expect(next.summary).toMatchObject({ fromTurn: 2, throughTurn: 50 });
    expect(next.summary.layers.length).toBeLessThanOrEqual(MAX_SUMMARY_LAYERS);
    // One request for turns 41-50 and one merge of the two oldest layers; nothing else re-read.
    expect(summarizer.requests.map((r) => r.input.match(/^Turns? [\d-]+/gm))).toEqual([
      Array.from({ length: 10 }, (_, i) => `Turn ${41 + i}`),
      [`Turns 2-${first.summary.layers[0]!.throughTurn}`, `Turns ${first.summary.layers[1]!.fromTurn}-${first.summary.layers[1]!.throughTurn}`],
    ]);
    // The newest old layer is kept word for word.
    expect(next.summary.layers).toContainEqual(first.summary.layers[2]);
    expect(next.summary.layers[0]!.text).toContain('hunter2');
  });

  it('builds rule-based layers within budget when the summarizer fails', async () => {
    const failures: unknown[] = [];
    const { summary, fallbacks } = await updateStructuralSummary(undefined, digests(2, 40), {
      summarizer: createFakeSummarizer({ fail: true }),
      budgetTokens: 400,
      maxRequestTokens: 3_000,
      onFallback: (e) => failures.push(e),
    });
    expect(fallbacks).toBe(failures.length);
    expect(fallbacks).toBeGreaterThan(0);
    expect(summary.layers.every((l) => l.source === 'rules')).toBe(true);
    expect(layersTokens(summary.layers)).toBeLessThanOrEqual(400);
  });
});
