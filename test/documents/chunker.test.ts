import { describe, expect, it } from 'vitest';
import { chunkText, type Chunk, type ChunkOptions } from '../../src/documents/chunker.js';
import { approximateTokenCount } from '../../src/text/approximate-token-count.js';
import { seededRandom } from '../../testkit/vector-fixtures.js';

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

describe('chunkText: structure', () => {
  const guide = [
    '# Guide',
    '',
    'Welcome to the guide. It explains everything.',
    '',
    '## Install',
    '',
    'Download the installer. Run it as an administrator. Restart the machine afterwards.',
    '',
    '### Linux',
    '',
    'Use the package manager of your distribution. Then start the service.',
    '',
    '## Usage',
    '',
    'Open the app and sign in with your account.',
  ].join('\n');

  it('records the heading path of each section', () => {
    const chunks = chunkText(guide, { maxTokens: 12, countTokens: words, mergeSections: false });
    expect(chunks.map((c) => [c.headingPath.join(' > '), c.text.split('\n')[0]])).toEqual([
      ['Guide', '# Guide'],
      ['Guide > Install', '## Install'],
      ['Guide > Install', 'Restart the machine afterwards.'],
      ['Guide > Install > Linux', '### Linux'],
      ['Guide > Install > Linux', 'Then start the service.'],
      ['Guide > Usage', '## Usage'],
    ]);
    for (const chunk of chunks) expect(guide.slice(chunk.start, chunk.end)).toBe(chunk.text);
  });

  it('keeps a heading with the paragraph it introduces', () => {
    const chunks = chunkText(guide, { maxTokens: 12, countTokens: words });
    for (const chunk of chunks) expect(chunk.text).not.toMatch(/^#+ \w+$/);
  });

  it('puts small sections together under their common heading path', () => {
    const chunks = chunkText(guide, { maxTokens: 60, countTokens: words });
    expect(chunks.map((c) => c.headingPath)).toEqual([['Guide']]);
    const two = chunkText(guide, { maxTokens: 40, countTokens: words });
    expect(two.map((c) => c.headingPath)).toEqual([['Guide'], ['Guide', 'Usage']]);
    expect(two[0]!.text).toContain('### Linux');
    const three = chunkText(guide, { maxTokens: 30, countTokens: words });
    expect(three.map((c) => c.headingPath)).toEqual([['Guide'], ['Guide', 'Install'], ['Guide', 'Usage']]);
  });

  it('labels a title over a single chapter with the chapter', () => {
    const doc = '# Book\n\n## Chapter One\n\nIt was a dark night.\n\n### Scene\n\nRain fell.';
    expect(chunkText(doc, { maxTokens: 100 }).map((c) => c.headingPath)).toEqual([['Book', 'Chapter One']]);
    const split = chunkText(doc, { maxTokens: 10, countTokens: words, mergeSections: false });
    expect(split[0]!.text.startsWith('# Book\n\n## Chapter One\n\nIt was')).toBe(true);
    expect(split.map((c) => c.headingPath)).toEqual([
      ['Book', 'Chapter One'],
      ['Book', 'Chapter One', 'Scene'],
    ]);
  });

  it('reads setext headings, strips inline markup, and skips # lines in fenced code', () => {
    const doc = [
      'Manual',
      '======',
      '',
      'Intro text here.',
      '',
      '## Setup `tool` with [links](http://x.y) ##',
      '',
      '```sh',
      '# install it',
      'make install',
      '```',
      '',
      'Details',
      '-------',
      '',
      'More text.',
    ].join('\n');
    const chunks = chunkText(doc, { maxTokens: 14, countTokens: words, mergeSections: false });
    expect(chunks.map((c) => c.headingPath)).toEqual([['Manual'], ['Manual', 'Setup tool with links'], ['Manual', 'Details']]);
    expect(chunks[1]!.text).toContain('# install it');
  });

  it('ignores # lines in plain text', () => {
    const chunks = chunkText('# not a heading\n\nbody text', { maxTokens: 3, countTokens: words, markup: 'plain' });
    expect(chunks.every((c) => c.headingPath.length === 0)).toBe(true);
  });

  it('returns nothing for blank input', () => {
    expect(chunkText('', { maxTokens: 5 })).toEqual([]);
    expect(chunkText(' \n\n \t', { maxTokens: 5 })).toEqual([]);
  });
});

describe('chunkText: boundaries and overlap', () => {
  const prose = Array.from({ length: 30 }, (_, i) => `Sentence number ${i} talks about topic ${i % 7} in some detail.`).join(' ');

  it('ends chunks at sentence ends when sentences fit', () => {
    const chunks = chunkText(prose, { maxTokens: 25, countTokens: words });
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) {
      expect(words(chunk.text)).toBeLessThanOrEqual(25);
      expect(chunk.text).toMatch(/^Sentence number \d+/);
      expect(chunk.text).toMatch(/detail\.$/);
    }
  });

  it('repeats at most overlapTokens of the previous chunk, preferring a sentence start', () => {
    const chunks = chunkText(prose, { maxTokens: 25, overlapTokens: 10, countTokens: words });
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1]!;
      const chunk = chunks[i]!;
      expect(chunk.start).toBeLessThan(previous.end);
      expect(words(prose.slice(chunk.start, previous.end))).toBeLessThanOrEqual(10);
      expect(chunk.text).toMatch(/^Sentence number \d+/);
    }
  });

  it('cuts mid-sentence, with overlap, when a sentence does not fit', () => {
    const long = `${Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ')}.`;
    const chunks = chunkText(long, { maxTokens: 30, overlapTokens: 5, countTokens: words });
    expect(chunks.length).toBeGreaterThan(7);
    for (let i = 1; i < chunks.length; i++) {
      expect(words(long.slice(chunks[i]!.start, chunks[i - 1]!.end))).toBe(5);
      expect(chunks[i]!.tokenCount).toBeLessThanOrEqual(30);
    }
  });

  it('splits an over-long word by characters without breaking surrogate pairs or emoji', () => {
    const word = '👍🏽'.repeat(10) + 'x'.repeat(25);
    const chunks = chunkText(word, { maxTokens: 8, countTokens: (t) => [...new Intl.Segmenter().segment(t)].length });
    expect(chunks.map((c) => c.text).join('')).toBe(word);
    for (const chunk of chunks) expect(chunk.text).not.toMatch(/^[\udc00-\udfff]|[\ud800-\udbff]$|^\u{1f3fd}/u);
  });

  it('splits text without spaces at dictionary word boundaries', () => {
    const chinese = '今天天气很好我们去公园散步然后吃晚饭'.repeat(6);
    const chunks = chunkText(chinese, { maxTokens: 20, overlapTokens: 4 });
    expect(chunks.length).toBeGreaterThan(4);
    for (const chunk of chunks) expect(approximateTokenCount(chunk.text)).toBeLessThanOrEqual(20);
  });

  it('passes the chunk text to countTokens and reports its count', () => {
    const seen = new Set<string>();
    const chunks = chunkText(prose, { maxTokens: 40, countTokens: (t) => (seen.add(t), words(t)) });
    for (const chunk of chunks) {
      expect(seen.has(chunk.text)).toBe(true);
      expect(chunk.tokenCount).toBe(words(chunk.text));
    }
  });

  it('rejects impossible options', () => {
    expect(() => chunkText('x', { maxTokens: 0 })).toThrow(RangeError);
    expect(() => chunkText('x', { maxTokens: 5, overlapTokens: 5 })).toThrow(RangeError);
    expect(() => chunkText('x', { maxTokens: 2.5 })).toThrow(RangeError);
    expect(() => chunkText('abc', { maxTokens: 2, countTokens: (t) => t.length + 2 })).toThrow(/over maxTokens 2/);
  });
});

// ---------------------------------------------------------------------------------------------
// Property tests on random documents.

interface Generated {
  source: string;
  /** Paths of the content (non-heading) stretches, as the generator meant them. */
  content: { start: number; end: number; path: string[] }[];
}

const VOCABULARY = [
  'the',
  'a',
  'of',
  'protein',
  'expression',
  'was',
  'increased',
  'in',
  'patients',
  'with',
  'p53',
  'covid-19',
  'internationalization',
  'e.g.',
  '(see',
  'below)',
  'x',
  'cells;',
  'résumé',
  'naïve',
  'αβ',
  'Ωmega',
  '3.14',
  '1,000',
  'https://example.com/a/very/long/path?with=query&and=more',
  '👍🏽',
  'co-operate',
  "don't",
  'data_set',
  '—',
  '…',
];

function generateDocument(rand: () => number): Generated {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const newline = rand() < 0.15 ? '\r\n' : '\n';
  let source = '';
  const content: Generated['content'] = [];
  const stack: { level: number; text: string }[] = [];
  const path = () => stack.map((s) => s.text);

  const sentence = () => {
    if (rand() < 0.08) return '这是一个没有空格的中文句子用于测试分词。'.slice(0, int(4, 20));
    const n = int(1, 25);
    const ws = Array.from({ length: n }, () => pick(VOCABULARY));
    if (rand() < 0.03) ws.push('z'.repeat(int(30, 90)));
    const s = ws.join(' ');
    return s.charAt(0).toUpperCase() + s.slice(1) + pick(['.', '?', '!', '.']);
  };
  const paragraph = () => {
    const kind = rand();
    if (kind < 0.1) return Array.from({ length: int(1, 6) }, () => `- ${sentence()}`).join(newline);
    if (kind < 0.17) return ['```', ...Array.from({ length: int(1, 5) }, () => pick(['# comment', 'let x = 1;', '', '## not a heading'])), '```'].join(newline);
    const sentences = Array.from({ length: int(1, 8) }, sentence);
    // Hard-wrapped text, as from a PDF.
    return sentences.join(rand() < 0.2 ? newline : pick([' ', '  ']));
  };
  const addContent = (text: string) => {
    content.push({ start: source.length, end: source.length + text.length, path: path() });
    source += text;
  };

  const blocks = int(1, 25);
  if (rand() < 0.5) addContent(paragraph() + newline + newline);
  for (let b = 0; b < blocks; b++) {
    if (rand() < 0.35) {
      const level = int(1, 4);
      const text = `${pick(['Intro', 'Install', 'Usage', 'Limits', 'Notes', 'FAQ'])} ${b}`;
      while (stack.length && stack[stack.length - 1]!.level >= level) stack.pop();
      stack.push({ level, text });
      if (level <= 2 && rand() < 0.25) source += `${text}${newline}${(level === 1 ? '=' : '-').repeat(int(3, 8))}`;
      else source += `${'#'.repeat(level)} ${text}${rand() < 0.2 ? ` ${'#'.repeat(level)}` : ''}`;
      source += newline + pick([newline, '', newline + newline]);
      if (rand() < 0.2) continue; // a heading directly followed by another
    }
    addContent(paragraph());
    source += pick([newline + newline, `${newline}  ${newline}`, newline + newline + newline]);
  }
  return { source, content };
}

const COUNTERS: Record<string, (text: string) => number> = {
  approximate: approximateTokenCount,
  words,
  characters: (text) => Math.ceil(text.length / 4),
  // Model tokenizers add markers such as [CLS] and [SEP] to every input, even an empty one.
  withSpecials: (text) => approximateTokenCount(text) + 2,
};

const isPrefix = (prefix: string[], of: string[]) => prefix.length <= of.length && prefix.every((p, i) => p === of[i]);
function commonPrefix(paths: string[][]): string[] {
  if (paths.length === 0) return [];
  return paths.reduce((a, b) => {
    let n = 0;
    while (n < a.length && n < b.length && a[n] === b[n]) n++;
    return a.slice(0, n);
  });
}

function checkChunks(doc: Generated, options: ChunkOptions & { countTokens: (t: string) => number }, chunks: Chunk[]): number {
  const { source } = doc;
  const { maxTokens, overlapTokens = 0, countTokens } = options;
  let overlaps = 0;
  chunks.forEach((chunk, i) => {
    expect(chunk.index).toBe(i);
    expect(source.slice(chunk.start, chunk.end)).toBe(chunk.text);
    expect(chunk.text).toBe(chunk.text.trim());
    expect(chunk.text).not.toBe('');
    expect(chunk.tokenCount).toBe(countTokens(chunk.text));
    expect(chunk.tokenCount).toBeLessThanOrEqual(maxTokens);

    const paths = doc.content
      .filter((c) => c.start < chunk.end && c.end > chunk.start && source.slice(Math.max(c.start, chunk.start), Math.min(c.end, chunk.end)).trim() !== '')
      .map((c) => c.path);
    if (paths.length > 0) expect(isPrefix(chunk.headingPath, commonPrefix(paths)), `${JSON.stringify(chunk)} vs ${JSON.stringify(paths)}`).toBe(true);

    const previous = chunks[i - 1];
    if (previous) {
      expect(chunk.start).toBeGreaterThanOrEqual(previous.start);
      expect(chunk.end).toBeGreaterThan(previous.end);
      if (chunk.start < previous.end) {
        overlaps++;
        expect(overlapTokens).toBeGreaterThan(0);
        expect(countTokens(source.slice(chunk.start, previous.end))).toBeLessThanOrEqual(overlapTokens);
        expect(chunk.headingPath).toEqual(previous.headingPath);
      }
    }
  });

  // Every visible character is in some chunk.
  const covered = new Uint8Array(source.length);
  for (const chunk of chunks) covered.fill(1, chunk.start, chunk.end);
  for (let i = 0; i < source.length; i++) {
    if (!covered[i] && source[i]!.trim() !== '') throw new Error(`offset ${i} (${JSON.stringify(source.slice(i - 10, i + 10))}) is in no chunk`);
  }
  return overlaps;
}

describe('chunkText: properties on random documents', () => {
  const settings = [
    { maxTokens: 128, overlapTokens: 16 },
    { maxTokens: 64, overlapTokens: 0 },
    { maxTokens: 32, overlapTokens: 8 },
    { maxTokens: 12, overlapTokens: 4 },
    { maxTokens: 6, overlapTokens: 5 },
  ];

  for (const [name, countTokens] of Object.entries(COUNTERS)) {
    it(`holds for 120 documents with the ${name} counter`, () => {
      const rand = seededRandom(name.length * 7919 + 17);
      let overlaps = 0;
      for (let n = 0; n < 120; n++) {
        const doc = generateDocument(rand);
        const setting = settings[n % settings.length]!;
        const options = { ...setting, countTokens, mergeSections: n % 3 !== 0, markup: n % 11 === 0 ? ('plain' as const) : ('markdown' as const) };
        const chunks = chunkText(doc.source, options);
        if (options.markup === 'plain') expect(chunks.every((c) => c.headingPath.length === 0)).toBe(true);
        overlaps += checkChunks(doc, options, chunks);
      }
      expect(overlaps).toBeGreaterThan(40);
    });
  }

  it('chunks a large document quickly', () => {
    const rand = seededRandom(99);
    let source = '';
    while (source.length < 1_000_000) source += `${generateDocument(rand).source}\n\n`;
    const started = performance.now();
    const chunks = chunkText(source, { maxTokens: 128, overlapTokens: 16 });
    const elapsed = performance.now() - started;
    expect(chunks.length).toBeGreaterThan(1000);
    expect(elapsed).toBeLessThan(20_000);
  });
});
