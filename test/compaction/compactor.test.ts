import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/messages.js';
import { type CompactionInput, compactPrompt } from '../../src/compaction/compactor.js';
import { type CompactionSettings, compactionLimit } from '../../src/compaction/compaction-config.js';
import type { StructuralSummary } from '../../src/compaction/structural-summary.js';
import { estimateMessagesTokens } from '../../src/compaction/token-estimate.js';
import { createFakeSummarizer } from './fake-summarizer.js';
import { FACT, LIVE, SYSTEM, historyOf, ruleCheckpoints } from './history-fixtures.js';
import { toolPairingProblems } from './tool-pairing.js';

const settings = (contextWindow: number, extra: Partial<CompactionSettings> = {}): CompactionSettings => ({
  contextWindow,
  outputReserve: 256,
  triggerShare: 0.85,
  recentMessages: 8,
  ...extra,
});

function input(turnCount: number, contextWindow: number, extra: Partial<CompactionInput> = {}): CompactionInput {
  const history = historyOf(turnCount);
  return {
    system: [SYSTEM],
    history,
    live: LIVE,
    checkpoints: ruleCheckpoints(history),
    summary: undefined,
    settings: settings(contextWindow),
    ...extra,
  };
}

const text = (messages: ChatMessage[]) => messages.map((m) => m.content ?? '').join('\n');

describe('compactPrompt', () => {
  it('leaves a prompt under the trigger as it is', async () => {
    const request = input(2, 100_000);
    const result = await compactPrompt(request);
    expect(result.strategies).toEqual([]);
    expect(result.messages).toEqual([SYSTEM, ...request.history.flatMap((t) => t.messages), ...LIVE]);
    expect(result.tokensAfter).toBe(result.tokensBefore);
  });

  it('replaces the oldest turns by their checkpoints first, keeping the recent turns, and stops once under', async () => {
    const request = input(12, 4_000);
    const result = await compactPrompt(request);
    expect(result.strategies).toEqual(['checkpoints']);
    expect(result.tokensBefore).toBeGreaterThan(result.limit);
    expect(result.tokensAfter).toBeLessThanOrEqual(result.limit);
    expect(estimateMessagesTokens(result.messages)).toBe(result.tokensAfter);
    const out = result.messages;
    expect(out[0]).toBe(SYSTEM);
    // The oldest material goes first: the opening exchange is a checkpoint now.
    expect(text(out)).toContain('[Turn 1, summarised');
    expect(text(out)).toContain('[Turn 2, summarised');
    // Recent turns (the last 8 messages: turns 11 and 12) intact, then the live turn.
    expect(out.slice(-9)).toEqual([...request.history[10]!.messages, ...request.history[11]!.messages, ...LIVE]);
    // The newest older turn was not needed.
    expect(out).toContain(request.history[9]!.messages[2]);
    expect(toolPairingProblems(out)).toEqual([]);
  });

  it('uses a stored structural summary without asking the summarizer again', async () => {
    const summarizer = createFakeSummarizer();
    const stored: StructuralSummary = {
      fromTurn: 2,
      throughTurn: 30,
      layers: [{ level: 'brief', fromTurn: 2, throughTurn: 30, text: `Earlier: the user asked to ${FACT}.`, source: 'llm' }],
    };
    const result = await compactPrompt(input(36, 4_000, { summary: stored, summarizer }));
    expect(summarizer.requests).toHaveLength(0);
    expect(result.summaryUpdated).toBe(false);
    expect(result.strategies).toEqual(['checkpoints', 'structural_summary']);
    expect(result.tokensAfter).toBeLessThanOrEqual(result.limit);
    expect(text(result.messages)).toContain('locker code is 4512');
    expect(text(result.messages)).not.toContain('Question number 17');
    expect(toolPairingProblems(result.messages)).toEqual([]);
  });

  it('summarises the middle in graduated layers when checkpoints are not enough, then extends the summary incrementally', async () => {
    const summarizer = createFakeSummarizer();
    const first = await compactPrompt(input(60, 4_000, { summarizer }));
    expect(first.strategies).toEqual(['checkpoints', 'structural_summary']);
    expect(first.summaryUpdated).toBe(true);
    expect(first.tokensAfter).toBeLessThanOrEqual(first.limit);
    const summary = first.summary!;
    expect(summary.fromTurn).toBe(1);
    expect(summary.layers.map((l) => l.level)).toEqual(['brief', 'medium', 'detailed']);
    expect(summary.layers.map((l) => l.source)).toEqual(['llm', 'llm', 'llm']);
    expect(text(first.messages)).toContain('locker code is 4512');

    // Forty turns later the stored summary is extended with the new turns only.
    summarizer.requests.length = 0;
    const later = await compactPrompt(input(100, 4_000, { summarizer, summary }));
    expect(later.summaryUpdated).toBe(true);
    expect(later.summary!.fromTurn).toBe(1);
    expect(later.summary!.throughTurn).toBeGreaterThan(summary.throughTurn);
    expect(later.summary!.layers.length).toBeLessThanOrEqual(3);
    const reread = summarizer.requests.flatMap((r) => [...r.input.matchAll(/^Turn (\d+):/gm)].map((m) => Number(m[1])));
    expect(reread.length).toBeGreaterThan(0);
    expect(reread.every((turn) => turn > summary.throughTurn)).toBe(true);
    expect(text(later.messages)).toContain('locker code is 4512');
    expect(later.tokensAfter).toBeLessThanOrEqual(later.limit);
  });

  it('falls back to a rule-based summary when the summarizer fails', async () => {
    const fallbacks: unknown[] = [];
    const result = await compactPrompt(input(60, 4_000, { summarizer: createFakeSummarizer({ fail: true }), onFallback: (e) => fallbacks.push(e) }));
    expect(fallbacks.length).toBeGreaterThan(0);
    expect(result.summary!.layers.every((l) => l.source === 'rules')).toBe(true);
    expect(result.tokensAfter).toBeLessThanOrEqual(result.limit);
    expect(toolPairingProblems(result.messages)).toEqual([]);
  });

  it('drops the oldest whole turns when checkpoints and summaries are not enough, keeping the turn before the question', async () => {
    // Recent turns alone exceed the budget, even as checkpoints: only dropping them makes room.
    const request = input(12, 1_000, { settings: settings(1_000, { recentMessages: 40 }) });
    const result = await compactPrompt(request);
    expect(result.strategies).toContain('drop_turns');
    expect(result.tokensAfter).toBeLessThanOrEqual(result.limit);
    expect(result.messages[0]).toBe(SYSTEM);
    expect(result.messages.at(-1)).toBe(LIVE[0]);
    const seen = text(result.messages);
    expect(seen).toContain('Question number 12');
    // Dropped oldest first: the newer of two recent turns outlives the older.
    expect(seen).not.toContain('Question number 3:');
    expect(toolPairingProblems(result.messages)).toEqual([]);
  });

  // Regression: at turn 13 of a 4k-window conversation the model got the summary of turns 2-9 and
  // the question, turns 10-12 neither shown nor summarised; recent turns were dropped first.
  it('keeps the turn before the question in every request, raw or as its checkpoint, while older turns give way', async () => {
    const summarizer = createFakeSummarizer();
    let summary: StructuralSummary | undefined;
    for (const window of [1_400, 2_500, 4_096]) {
      for (let turns = 2; turns <= 80; turns += 3) {
        const result = await compactPrompt(input(turns, window, { summary, summarizer, settings: settings(window, { recentMessages: 8 }) }));
        if (result.summaryUpdated) summary = result.summary;
        const seen = text(result.messages);
        expect(seen, `window ${window}, turn ${turns + 1}`).toContain(`Question number ${turns}: what do my notes say`);
        expect(seen).toContain(`Question number ${turns - 1}: what do my notes say`);
        expect(result.tokensAfter).toBeLessThanOrEqual(result.limit);
        expect(toolPairingProblems(result.messages)).toEqual([]);
      }
      summary = undefined;
    }
  });

  it('turns the recent turns into checkpoints before asking the summarizer, the turn before the question last', async () => {
    const summarizer = createFakeSummarizer();
    // Six turns: nothing older than the recent tail is left to summarise, so checkpoints must do.
    const request = input(6, 2_000, { summarizer, settings: settings(2_000, { recentMessages: 24 }) });
    const result = await compactPrompt(request);
    expect(summarizer.requests).toHaveLength(0);
    expect(result.strategies).toEqual(['checkpoints']);
    expect(result.tokensAfter).toBeLessThanOrEqual(result.limit);
    // The newest turns stay raw longest.
    expect(result.messages).toContain(request.history[5]!.messages[2]);
    expect(text(result.messages)).toContain('[Turn 1, summarised');
  });

  it('stands a rule-based checkpoint in for a turn whose checkpoint is not written yet, so the prompt does not depend on timing', async () => {
    const history = historyOf(12);
    const all = ruleCheckpoints(history);
    const some = new Map([...all].filter(([turn]) => turn % 2 === 0));
    const withAll = await compactPrompt(input(12, 2_500, { checkpoints: all }));
    const withSome = await compactPrompt(input(12, 2_500, { checkpoints: some }));
    expect(withSome.messages.map((m) => m.content)).toEqual(withAll.messages.map((m) => m.content));
    expect(withSome.strategies).toEqual(withAll.strategies);
  });

  it('cuts the largest tool results of the turn in progress as a last resort, never the pairing', async () => {
    const live: ChatMessage[] = [
      LIVE[0]!,
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'a', name: 'search_knowledge', arguments: '{}' },
          { id: 'b', name: 'search_knowledge', arguments: '{}' },
        ],
      },
      { role: 'tool', toolCallId: 'a', content: 'x '.repeat(3_000) },
      { role: 'tool', toolCallId: 'b', content: 'short result' },
    ];
    const result = await compactPrompt(input(3, 1_200, { live }));
    expect(result.strategies).toEqual(expect.arrayContaining(['drop_turns', 'truncate_tool_results']));
    expect(result.tokensAfter).toBeLessThanOrEqual(result.limit);
    const tool = result.messages.find((m) => m.role === 'tool' && m.toolCallId === 'a');
    expect(tool?.content).toContain('characters cut to fit the context window');
    expect(result.messages.find((m) => m.role === 'tool' && m.toolCallId === 'b')?.content).toBe('short result');
    expect(result.messages[0]).toBe(SYSTEM);
    expect(result.messages).toContain(LIVE[0]);
    expect(toolPairingProblems(result.messages)).toEqual([]);
  });

  it('reports a prompt that cannot fit rather than removing the system prompt or the question', async () => {
    const huge: ChatMessage = { role: 'user', content: 'word '.repeat(5_000) };
    const result = await compactPrompt(input(3, 1_000, { live: [huge] }));
    expect(result.fits).toBe(false);
    expect(result.messages).toEqual([SYSTEM, huge]);
  });

  it('keeps every request valid and under the limit across growing histories and windows', async () => {
    for (const window of [1_500, 3_000, 6_000]) {
      let summary: StructuralSummary | undefined;
      const summarizer = createFakeSummarizer();
      for (let turns = 1; turns <= 80; turns += 7) {
        const result = await compactPrompt(input(turns, window, { summary, summarizer }));
        if (result.summaryUpdated) summary = result.summary;
        expect(result.tokensAfter, `window ${window}, ${turns} turns`).toBeLessThanOrEqual(compactionLimit(settings(window)));
        expect(toolPairingProblems(result.messages)).toEqual([]);
        expect(result.messages[0]).toBe(SYSTEM);
        expect(result.messages.at(-1)).toBe(LIVE[0]);
      }
    }
  });
});
