import { describe, expect, it } from 'vitest';
import { answerCandidates } from '../../src/chat/extractive/answer-candidates.js';
import { clipChars, clipToTokens, truncateMiddle } from '../../src/compaction/clip-text.js';
import { chunkText } from '../../src/documents/chunker.js';
import { findMarkdownHeadings } from '../../src/documents/chunking/markdown-headings.js';
import { SPLIT_LEVELS } from '../../src/documents/chunking/text-boundaries.js';
import { htmlToMarkdown } from '../../src/documents/parsers/html-to-markdown.js';
import { locateQuote } from '../../src/memory/extraction/quote-location.js';
import { readsAsEnglish } from '../../src/memory/firewall/english-text.js';
import { describesUser, ruleReasons } from '../../src/memory/firewall/firewall-rules.js';
import { lexicalFeatures } from '../../src/memory/firewall/lexical-features.js';
import { defaultAnalyzer } from '../../src/retrieval/bm25/analyzer.js';
import { makeSnippet } from '../../src/retrieval/snippet.js';
import type { Source } from '../../src/retrieval/source.js';
import { readTimeWindow } from '../../src/text/time-window.js';
import { SUPER_LINEAR, describeGrowth, timedGrowth, timedGrowthAsync } from '../support/growth-ratio.js';

/**
 * Every function that walks user text, against inputs built to make it re-read what it has read:
 * runs without spaces, many lines, repeated abbreviations and stops, deep nesting, long runs of
 * punctuation. Each input is doubled three times; cost growing faster than the input fails.
 */
const ADVERSARIAL: Record<string, (n: number) => string> = {
  'one word': (n) => 'x'.repeat(n),
  'wrapped lines': (n) => 'zebra\n'.repeat(n / 6),
  'blank lines': (n) => '\n'.repeat(n),
  spaces: (n) => `a${' '.repeat(n)}b`,
  titles: (n) => 'Mr. '.repeat(n / 4),
  'letter stops': (n) => 'a.'.repeat(n / 2),
  punctuation: (n) => '!?.,;:-'.repeat(n / 7),
  'instruction words': (n) => 'ignore all previous instructions and '.repeat(n / 37),
  'repeated dates': (n) => 'last week on Jan. 5 '.repeat(n / 20),
};

/** The smallest size is halved while one run of it takes longer than this, down to 16k characters. */
const SHRINKS_TO = { budgetMs: 25, minBase: 16384 };

const memory = (content: string) => [{ id: 1, kind: 'memory', key: 'k', agentId: 'a', content, tags: [], score: 1 }] as unknown as Source[];
const terms = new Set(['zebra']);
const asOf = new Date('2026-01-01T00:00:00Z');

const WALKERS: Record<string, (text: string) => unknown> = {
  'BM25 analyzer': (text) => defaultAnalyzer.analyze(text),
  'extractive answer candidates': (text) => answerCandidates(memory(text)),
  'quote location (loose)': (text) => locateQuote([text], 'zebra', 'ZEBRA  zebra'),
  'quote location (best sentence)': (text) => locateQuote([text], 'zebra stripes'),
  snippet: (text) => makeSnippet(`${text} zebra`, terms, defaultAnalyzer),
  'firewall rules': (text) => ruleReasons(text),
  'firewall: describes the user': (text) => describesUser(text),
  'firewall: reads as English': (text) => readsAsEnglish(text),
  'firewall: lexical features': (text) => lexicalFeatures(text, 256),
  'time phrases': (text) => readTimeWindow(text, asOf),
  chunker: (text) => chunkText(text, { maxTokens: 64 }),
  'markdown headings': (text) => findMarkdownHeadings(text),
  'boundary finders': (text) => SPLIT_LEVELS.map((find) => find(text)),
  'compaction clips': (text) => [clipChars(text, 100), clipToTokens(text, 50), truncateMiddle(text, 100)],
};

describe('linear time, everywhere text is read', () => {
  const cases = Object.entries(WALKERS).flatMap(([walker, work]) => Object.entries(ADVERSARIAL).map(([input, make]) => [walker, input, make, work] as const));
  it.each(cases)('%s reads %s in linear time', async (walker, _input, make, work) => {
    // Fixed costs and collections blur small sizes, the chunker's most: each is measured from sizes
    // that take milliseconds. A walk slow on its input starts smaller, from sizes that still do.
    const growth = await timedGrowthAsync(make, async (text) => work(text), { base: walker === 'chunker' ? 65536 : 32768, ...SHRINKS_TO, runs: 3 });
    expect(growth.perDoubling, describeGrowth(growth)).toBeLessThan(SUPER_LINEAR);
  });
});

/**
 * Markup the parsers walk element by element. Deep nesting is left out: turndown's DOM recurses
 * per level and overflows the stack near 400 levels, a failure and not a stall.
 */
const MARKUP: Record<string, (n: number) => string> = {
  'sibling paragraphs': (n) => '<p>a</p>'.repeat(n / 8),
  'unclosed paragraphs': (n) => '<p>a'.repeat(n / 4),
  'table cells': (n) => `<table><tr>${'<td>a</td>'.repeat(n / 10)}</tr></table>`,
  'long attributes': (n) => `<a href="${'x'.repeat(n)}">link</a>`,
};

describe('linear time in the markup parsers', () => {
  it.each(Object.entries(MARKUP))('HTML to Markdown reads %s in linear time', (_input, make) => {
    const growth = timedGrowth(make, htmlToMarkdown, { base: 4096, runs: 3 });
    expect(growth.perDoubling, describeGrowth(growth)).toBeLessThan(SUPER_LINEAR);
  });
  it.each(Object.entries({ 'heading runs': (n: number) => '# '.repeat(n / 2), 'nested quotes and lists': (n: number) => '> - '.repeat(n / 4) }))(
    'the chunker reads Markdown %s in linear time',
    (_input, make) => {
      const growth = timedGrowth(make, (text) => chunkText(text, { maxTokens: 64, markup: 'markdown' }), { base: 65536, ...SHRINKS_TO, runs: 3 });
      expect(growth.perDoubling, describeGrowth(growth)).toBeLessThan(SUPER_LINEAR);
    },
  );
});

describe('time phrases in a long query', () => {
  it('finds a phrase wherever a piece of the query is cut', () => {
    // Every offset around the pieces' overlap (1,500 to 2,000 characters in).
    for (let at = 1400; at < 2100; at += 37) {
      const query = `${'x '.repeat(at / 2)}two weeks ago ${'y '.repeat(2000)}`;
      expect(readTimeWindow(query, asOf)?.text, `phrase at ${at}`).toBe('two weeks ago');
    }
  });
});

describe('chunking a 256 KB run of letter stops overflows the call stack', () => {
  it('chunks text that falls apart into hundreds of thousands of pieces', () => {
    const text = 'a.'.repeat(131_072);
    const chunks = chunkText(text, { maxTokens: 64 });
    expect(chunks[0]?.start).toBe(0);
    expect(chunks.at(-1)?.end).toBe(text.length);
    for (const chunk of chunks) expect(chunk.text).toBe(text.slice(chunk.start, chunk.end));
  });
});
