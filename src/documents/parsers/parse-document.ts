import type { DocumentFormat } from './document-format.js';
import { documentParsers } from './document-parsers.js';
import type { ParseDocumentInput as RegistryParseInput, ParsedDocument as RegistryParsedDocument } from './parser-registry.js';

export type ParseDocumentInput = RegistryParseInput<DocumentFormat>;
export type ParsedDocument = RegistryParsedDocument<DocumentFormat>;

/** A document's text, by the parser registered for its format. */
export function parseDocument(input: ParseDocumentInput): Promise<ParsedDocument> {
  return documentParsers.parse(input);
}
