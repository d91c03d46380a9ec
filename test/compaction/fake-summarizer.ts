import type { SummarizeRequest, Summarizer } from '../../src/compaction/summarizer.js';

/**
 * A summarizer that keeps the sentences naming a fact the user asked to remember ("remember ...")
 * and reports how many turns it read, so tests can check which facts survive summaries of
 * summaries. `fail` makes it throw, to exercise the fallbacks.
 */
export function createFakeSummarizer(options: { fail?: boolean } = {}): Summarizer & { requests: SummarizeRequest[] } {
  const requests: SummarizeRequest[] = [];
  return {
    requests,
    async summarize(request) {
      requests.push(request);
      if (options.fail) throw new Error('summarizer unavailable');
      const facts = [...new Set(request.input.match(/remember[^.\n]*/gi) ?? [])];
      if (request.instructions.includes('JSON')) {
        return JSON.stringify({ summary: `Facts: ${facts.join('; ') || 'none'}.`, actionable_summary: 'Answered.' });
      }
      const turns = request.input.match(/Turns? \d+/g)?.length ?? 0;
      return `Covered ${turns} parts. Facts: ${facts.join('; ') || 'none'}.`;
    },
  };
}
