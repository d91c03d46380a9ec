import { describe, expect, it } from 'vitest';
import { defineParser } from '../../../src/documents/parsers/document-parser.js';
import { DocumentParseError } from '../../../src/documents/parsers/document-parse-error.js';
import { createDocumentParsers, documentParsers } from '../../../src/documents/parsers/document-parsers.js';
import { DOCUMENT_FORMATS, TEXT_DOCUMENT_FORMATS, detectFormat } from '../../../src/documents/parsers/document-format.js';
import { createParserRegistry } from '../../../src/documents/parsers/parser-registry.js';
import { parseStage } from '../../../src/documents/ingest/parse-stage.js';

/** A format only this test knows: comma-separated rows become one line of `key: value` pairs each. */
const csvParser = defineParser({
  format: 'csv',
  extensions: ['csv'],
  mediaTypes: ['text/csv'],
  textual: true,
  parse(data) {
    const text = typeof data === 'string' ? data : new TextDecoder().decode(data);
    const [header = '', ...rows] = text.split('\n').filter((line) => line.trim() !== '');
    const keys = header.split(',');
    return {
      text: rows
        .map((row) =>
          row
            .split(',')
            .map((v, i) => `${keys[i]}: ${v}`)
            .join('; '),
        )
        .join('\n'),
      markup: 'plain',
    };
  },
});

async function caught(work: () => unknown): Promise<DocumentParseError> {
  let error: unknown;
  try {
    await work();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(DocumentParseError);
  return error as DocumentParseError;
}

describe('the parser registry', () => {
  it('lists the built-in formats in registration order, the binary ones apart', () => {
    expect(DOCUMENT_FORMATS).toEqual(['text', 'markdown', 'html', 'pdf']);
    expect(TEXT_DOCUMENT_FORMATS).toEqual(['text', 'markdown', 'html']);
  });

  it('names every registered extension when an upload has none of them', async () => {
    const error = await caught(() => detectFormat('slides.pptx', 'application/vnd.ms-powerpoint'));
    expect(error.code).toBe('unsupported_format');
    expect(error.message).toBe(
      'unsupported file type ("slides.pptx", type application/vnd.ms-powerpoint): upload .txt, .text, .md, .markdown, .html, .htm or .pdf',
    );
    expect((await caught(() => detectFormat(undefined, undefined))).message).toBe(
      'unsupported file type: upload .txt, .text, .md, .markdown, .html, .htm or .pdf',
    );
  });

  it('refuses a format it does not know, listing those it does', async () => {
    const error = await caught(() => documentParsers.parse({ format: 'docx', data: 'x' }));
    expect(error.code).toBe('unsupported_format');
    expect(error.message).toBe('unsupported document format: docx; supported: text, markdown, html, pdf');
  });

  it('parses, detects and lists a format registered in a test, leaving the shared registry alone', async () => {
    const parsers = createDocumentParsers().register(csvParser);
    expect(parsers.formats).toEqual(['text', 'markdown', 'html', 'pdf', 'csv']);
    expect(parsers.textFormats).toContain('csv');
    expect(parsers.has('csv')).toBe(true);
    expect(parsers.detect('prices.CSV', 'application/octet-stream')).toBe('csv');
    expect(parsers.detect('export', 'text/csv; charset=utf-8')).toBe('csv');
    expect(parsers.detect('notes.md', 'text/csv')).toBe('markdown');

    const parsed = await parsers.parse({ format: 'csv', data: new TextEncoder().encode('fruit,price\napple,3\npear,4\n') });
    expect(parsed).toEqual({ format: 'csv', markup: 'plain', text: 'fruit: apple; price: 3\nfruit: pear; price: 4' });
    const staged = await parseStage({ format: 'csv', content: 'fruit,price\nplum,5', filename: 'plums.csv' }, parsers);
    expect(staged.text).toBe('fruit: plum; price: 5');

    const unsupported = await caught(() => parsers.detect('slides.pptx'));
    expect(unsupported.message).toMatch(/: upload \.txt, .*, \.pdf or \.csv$/);
    expect((await caught(() => parsers.parse({ format: 'xml', data: '<a/>' }))).message).toBe(
      'unsupported document format: xml; supported: text, markdown, html, pdf, csv',
    );

    expect(documentParsers.has('csv')).toBe(false);
    expect((await caught(() => detectFormat('prices.csv', 'text/csv'))).code).toBe('unsupported_format');
  });

  it('refuses blank text from any parser, naming the upload', async () => {
    const parsers = createParserRegistry().register(csvParser);
    const error = await caught(() => parsers.parse({ format: 'csv', data: 'only,a,header\n', filename: 'empty.csv' }));
    expect(error.code).toBe('empty');
    expect(error.message).toBe('the document "empty.csv" contains no text');
  });

  it('refuses a second parser for a registered format, extension or media type', () => {
    const parsers = createDocumentParsers();
    expect(() => parsers.register({ ...csvParser, format: 'pdf' })).toThrow(/format pdf already registered/);
    expect(() => parsers.register({ ...csvParser, extensions: ['csv', 'MD'] })).toThrow(/extension \.MD already registered/);
    expect(() => parsers.register({ ...csvParser, mediaTypes: ['Text/HTML'] })).toThrow(/media type Text\/HTML already registered/);
    // A refused registration leaves nothing half-registered.
    expect(parsers.formats).not.toContain('csv');
    expect(parsers.register(csvParser).formats).toContain('csv');
  });
});
