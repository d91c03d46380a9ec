import { documentParsers } from './document-parsers.js';
import type { FormatOf } from './parser-registry.js';

/** The names of the registered formats: what the API accepts as `format` and stores with a document. */
export type DocumentFormat = FormatOf<typeof documentParsers>;

export const DOCUMENT_FORMATS: readonly DocumentFormat[] = documentParsers.formats;

/** The formats a JSON body can carry as `text` (not the binary ones, such as PDF). */
export const TEXT_DOCUMENT_FORMATS: readonly DocumentFormat[] = documentParsers.textFormats;

export function isDocumentFormat(value: unknown): value is DocumentFormat {
  return typeof value === 'string' && documentParsers.has(value);
}

/** The format of an upload, from its file name or else its media type; see `ParserRegistry.detect`. */
export function detectFormat(filename?: string | null, mimeType?: string | null): DocumentFormat {
  return documentParsers.detect(filename, mimeType);
}
