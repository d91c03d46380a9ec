import { describe, expect, it } from 'vitest';
import { defaultAnalyzer } from '../../src/retrieval/bm25/analyzer.js';
import { approximateTokenCount } from '../../src/text/approximate-token-count.js';
import { prepareChunks } from '../../src/documents/prepare-chunks.js';
import { makeSnippet } from '../../src/retrieval/snippet.js';
import { loadUseLiteTokenizer } from '../../src/embeddings/use-lite-tokenizer.js';
import { BUNDLED_USE_MAX_INPUT_TOKENS } from '../../src/embeddings/bundled-use-embedder.js';
import { loadCorpus } from '../../scripts/bench/lib/beir.js';
import { sharedDataset } from '../support/shared-data.js';

const scifact = sharedDataset('scifact', ['corpus.jsonl']);

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

describe('prepareChunks', () => {
  it('puts a short title in front of every chunk and keeps title + chunk within the window', () => {
    const chunks = prepareChunks({ title: 'A Short Title', text: words(400), markup: 'plain', maxInputTokens: 64, analyzer: defaultAnalyzer });
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) {
      expect(c.context).toBe('A Short Title');
      expect(c.indexedText).toBe(`A Short Title\n\n${c.text}`);
      expect(approximateTokenCount(c.context) + 1 + c.tokenCount).toBeLessThanOrEqual(64);
    }
  });

  it('groups consecutive chunks into BM25 passages of at most passageTokens, title included, covering their chunks once', () => {
    const text = words(600);
    const chunks = prepareChunks({
      title: 'A Short Title',
      text,
      markup: 'plain',
      maxInputTokens: 64,
      analyzer: defaultAnalyzer,
      options: { maxTokens: 40, overlapTokens: 8, passageTokens: 200 },
    });
    const leads = chunks.filter((c) => c.passageTerms !== null);
    expect(leads.length).toBeGreaterThan(1);
    expect(leads.length).toBeLessThan(chunks.length);
    const covered = new Set<string>();
    for (const [i, c] of chunks.entries()) {
      expect(c.index).toBe(i);
      const lead = chunks[c.passage]!;
      expect(lead.passageTerms).not.toBeNull();
      // Passages are runs: a chunk's passage starts at or after the previous chunk's.
      if (i > 0) expect(c.passage).toBeGreaterThanOrEqual(chunks[i - 1]!.passage);
      if (c.passageTerms) {
        const members = chunks.filter((m) => m.passage === c.index);
        const body = text.slice(c.start, members[members.length - 1]!.end);
        expect(c.passageTerms.text).toBe(`A Short Title\n\n${body}`);
        expect(approximateTokenCount(c.passageTerms.text)).toBeLessThanOrEqual(200 + 1);
        expect(c.passageTerms.length).toBe(defaultAnalyzer.analyze(c.passageTerms.text).length);
        for (const word of body.split(' ')) covered.add(word);
        // Within a passage, the overlap between its chunks is indexed once.
        expect(defaultAnalyzer.analyze(body)).toHaveLength(new Set(body.split(' ')).size);
      }
    }
    expect(covered.size).toBe(600);
  });

  it('makes every chunk a passage of its own when passageTokens is at most the chunk size', () => {
    const chunks = prepareChunks({
      title: '',
      text: words(300),
      markup: 'plain',
      maxInputTokens: 64,
      analyzer: defaultAnalyzer,
      options: { passageTokens: 1 },
    });
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(c.passage).toBe(c.index);
      expect(c.passageTerms?.text).toBe(c.indexedText);
    }
  });

  // Regression: chunks sized by the estimate alone could exceed USE lite's 128 tokens (the estimate
  // is low for up to 1.34x of real counts), and the model silently drops the rest.
  it('keeps title + chunk within the bundled model window when counted by its tokenizer, on SciFact', async ({ skip }) => {
    skip(!scifact.present, scifact.skipReason);
    const tokenizer = await loadUseLiteTokenizer();
    const countTokens = (text: string) => tokenizer.countTokens(text);
    const corpus = (await loadCorpus(scifact.dir)).slice(0, 150);
    let chunkCount = 0;
    for (const doc of corpus) {
      const chunks = prepareChunks({
        title: doc.title,
        text: doc.text,
        markup: 'plain',
        maxInputTokens: BUNDLED_USE_MAX_INPUT_TOKENS,
        analyzer: defaultAnalyzer,
        countTokens,
      });
      for (const c of chunks) expect(countTokens(c.indexedText)).toBeLessThanOrEqual(BUNDLED_USE_MAX_INPUT_TOKENS);
      chunkCount += chunks.length;
    }
    expect(chunkCount).toBeGreaterThan(corpus.length);
  });

  it('leaves out of the chunks, not the passages, a title longer than a quarter of the window, and honours smaller maxTokens and overlap', () => {
    const chunks = prepareChunks({
      title: words(30),
      text: words(200),
      markup: 'plain',
      maxInputTokens: 64,
      analyzer: defaultAnalyzer,
      options: { maxTokens: 20, overlapTokens: 5 },
    });
    for (const c of chunks) {
      expect(c.context).toBe('');
      expect(c.tokenCount).toBeLessThanOrEqual(20);
      // BM25 has no window: the passage keeps the title the embedder had no room for.
      if (c.passageTerms) expect(c.passageTerms.text.startsWith(`${words(30)}\n\n`)).toBe(true);
    }
    expect(chunks.filter((c) => c.passageTerms).length).toBeGreaterThan(0);
    // Overlap: each chunk after the first starts before the previous one ended.
    expect(chunks.slice(1).every((c, i) => c.start < chunks[i]!.end)).toBe(true);
  });
});

describe('makeSnippet', () => {
  it('centres on the first word matching a query term, stemmed, cut at word boundaries', () => {
    const text = `${words(60)} The infection spread quickly. ${words(60)}`;
    const snippet = makeSnippet(text, new Set(defaultAnalyzer.analyze('infections')), defaultAnalyzer, 120);
    expect(snippet).toContain('infection');
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
    expect(snippet.length).toBeLessThanOrEqual(122);
    expect(makeSnippet('short text', new Set(['x']), defaultAnalyzer)).toBe('short text');
  });
});
