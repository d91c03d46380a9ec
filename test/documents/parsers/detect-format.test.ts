import { describe, expect, it } from 'vitest';
import { detectFormat } from '../../../src/documents/parsers/document-format.js';
import { DocumentParseError } from '../../../src/documents/parsers/document-parse-error.js';

describe('detectFormat', () => {
  it.each([
    ['notes.txt', undefined, 'text'],
    ['README.md', 'text/plain', 'markdown'],
    ['guide.MARKDOWN', 'application/octet-stream', 'markdown'],
    ['page.htm', undefined, 'html'],
    ['page.html', 'text/html; charset=utf-8', 'html'],
    ['Report.PDF', 'application/octet-stream', 'pdf'],
    ['upload', 'application/pdf', 'pdf'],
    [undefined, 'text/markdown; charset=UTF-8', 'markdown'],
    ['blob', 'TEXT/HTML', 'html'],
    ['data.bin', 'text/plain', 'text'],
  ] as const)('%s + %s → %s', (filename, mime, expected) => {
    expect(detectFormat(filename, mime)).toBe(expected);
  });

  it('throws a typed, readable error for anything else', () => {
    let error: unknown;
    try {
      detectFormat('slides.pptx', 'application/vnd.ms-powerpoint');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DocumentParseError);
    expect((error as DocumentParseError).code).toBe('unsupported_format');
    expect((error as DocumentParseError).message).toMatch(/unsupported file type \("slides\.pptx", type application\/vnd\.ms-powerpoint\)/);
    expect(() => detectFormat(undefined, undefined)).toThrow(DocumentParseError);
  });
});
