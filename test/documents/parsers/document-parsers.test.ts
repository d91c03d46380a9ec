import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DocumentParseError } from '../../../src/documents/parsers/document-parse-error.js';
import { documentParsers } from '../../../src/documents/parsers/document-parsers.js';

const parseDocument = documentParsers.parse.bind(documentParsers);
import { minimalPdf, toBytes } from '../support/minimal-pdf.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/documents/${name}`, import.meta.url));

async function parseError(promise: Promise<unknown>): Promise<DocumentParseError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DocumentParseError);
  return error as DocumentParseError;
}

describe('parseDocument: text and markdown', () => {
  it('decodes UTF-8 bytes, drops the BOM and normalises line ends', async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('Caf\u00e9\r\nna\u00efve\rend')]);
    const doc = await parseDocument({ format: 'text', data: bytes });
    expect(doc).toEqual({ text: 'Café\nnaïve\nend', format: 'text', markup: 'plain' });
  });

  it('falls back to Windows-1252 for bytes that are not UTF-8', async () => {
    const doc = await parseDocument({ format: 'text', data: new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]) });
    expect(doc.text).toBe('café €');
  });

  it('decodes UTF-16 with a byte order mark', async () => {
    const le = new Uint8Array([0xff, 0xfe, 0x68, 0x00, 0x69, 0x00]);
    expect((await parseDocument({ format: 'text', data: le })).text).toBe('hi');
  });

  it('keeps Markdown as written and marks it as markdown', async () => {
    const doc = await parseDocument({ format: 'markdown', data: fixture('guide.md') });
    expect(doc.markup).toBe('markdown');
    expect(doc.text).toContain('## Install\n\nRun the installer');
  });

  it('rejects binary data and empty documents with a typed error', async () => {
    const binary = await parseError(parseDocument({ format: 'text', data: new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00]), filename: 'x.txt' }));
    expect(binary.code).toBe('invalid_document');
    expect(binary.message).toMatch(/not a valid text file "x\.txt"/);
    const empty = await parseError(parseDocument({ format: 'markdown', data: ' \n\n ' }));
    expect(empty.code).toBe('empty');
  });
});

describe('parseDocument: html', () => {
  it('converts to Markdown with ATX headings, without scripts, styles or navigation', async () => {
    const doc = await parseDocument({ format: 'html', data: fixture('guide.html') });
    expect(doc.format).toBe('html');
    expect(doc.markup).toBe('markdown');
    const lines = doc.text.split('\n');
    expect(lines.filter((l) => l.startsWith('#'))).toEqual(['# Widget Guide', '## Install', '## Limits', '### Notes']);
    expect(doc.text).not.toMatch(/analytics|font-family|Example Corp|Home/);
    expect(doc.text.startsWith('# Widget Guide')).toBe(true);
  });

  it('keeps link text and image alt text but not URLs', async () => {
    const doc = await parseDocument({ format: 'html', data: fixture('guide.html') });
    expect(doc.text).toContain('readable labels');
    expect(doc.text).toContain('Uptime chart');
    expect(doc.text).not.toContain('https://');
    expect(doc.text).not.toContain('base64');
  });

  it('writes tables as pipe rows and code as fences', async () => {
    const doc = await parseDocument({ format: 'html', data: fixture('guide.html') });
    expect(doc.text).toContain('| Plan | Widgets |\n| --- | --- |\n| Free | 10 |\n| Pro | 1,000 |');
    expect(doc.text).toContain('```\nnpm install widget\n```');
  });

  it('escapes a paragraph that looks like a heading, and nothing inline', async () => {
    const doc = await parseDocument({ format: 'html', data: fixture('guide.html') });
    expect(doc.text).toContain('\\# 1 priority is uptime.');
    expect(doc.text).toContain('snake_case');
    expect(doc.text).not.toContain('snake\\_case');
  });

  it('accepts a fragment given as a string', async () => {
    const doc = await parseDocument({ format: 'html', data: '<h2>Title &amp; more</h2><p>Body<br>text</p>' });
    expect(doc.text).toMatch(/^## Title & more\n\nBody\s*\ntext$/);
  });

  it('rejects a page without text', async () => {
    const error = await parseError(parseDocument({ format: 'html', data: '<script>alert(1)</script><style>p{}</style>' }));
    expect(error.code).toBe('empty');
  });
});

describe('parseDocument: pdf', () => {
  it('extracts lines, with a blank line between pages', async () => {
    const pdf = minimalPdf([['Hello (PDF) world.', 'Second line.'], ['Page two.']]);
    const doc = await parseDocument({ format: 'pdf', data: toBytes(pdf) });
    expect(doc).toEqual({ text: 'Hello (PDF) world.\nSecond line.\n\nPage two.', format: 'pdf', markup: 'plain' });
  });

  it('reads compressed content streams (the shipped fixture)', async () => {
    const doc = await parseDocument({ format: 'pdf', data: fixture('two-pages.pdf') });
    expect(doc.text).toBe(
      'Quarterly report\nRevenue grew by 12 percent in the third quarter.\n\nOutlook\nWe expect steady growth (subject to market conditions).',
    );
  });

  it("accepts a binary string and leaves the caller's buffer intact", async () => {
    const pdf = minimalPdf([['From a string.']]);
    expect((await parseDocument({ format: 'pdf', data: pdf })).text).toBe('From a string.');
    const bytes = toBytes(pdf);
    await parseDocument({ format: 'pdf', data: bytes });
    expect(bytes.byteLength).toBe(pdf.length);
  });

  it('rejects corrupt and truncated PDFs with a human message', async () => {
    const garbage = await parseError(parseDocument({ format: 'pdf', data: new TextEncoder().encode('this is not a pdf'), filename: 'a.pdf' }));
    expect(garbage.code).toBe('invalid_document');
    expect(garbage.message).toMatch(/^not a valid PDF: /);

    const pdf = toBytes(minimalPdf([['Some text that will be cut off.']]));
    const truncated = await parseError(parseDocument({ format: 'pdf', data: pdf.subarray(0, 120) }));
    expect(truncated.code).toBe('invalid_document');
    expect(truncated.message).toMatch(/^not a valid PDF: /);
  });

  it('rejects a PDF without a text layer', async () => {
    const error = await parseError(parseDocument({ format: 'pdf', data: minimalPdf([[]]), filename: 'scan.pdf' }));
    expect(error.code).toBe('empty');
    expect(error.message).toMatch(/no text layer/);
  });

  it('rejects a string that is not binary', async () => {
    const error = await parseError(parseDocument({ format: 'pdf', data: '%PDF-1.4 \u2603' }));
    expect(error.code).toBe('invalid_document');
  });
});
