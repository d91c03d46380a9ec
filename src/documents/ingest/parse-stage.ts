import type { DocumentFormat } from '../parsers/document-format.js';
import { documentParsers } from '../parsers/document-parsers.js';
import type { ParsedDocument, ParserRegistry } from '../parsers/parser-registry.js';

export interface ParseStageInput<F extends string = DocumentFormat> {
  /** Text, or the bytes of an uploaded file. */
  content: string | Uint8Array;
  format: F;
  /** The upload's name, for error messages. */
  filename?: string;
}

/**
 * Stage 1: the document's text, by the parser registered for its format (in `documentParsers`
 * unless another registry is given). Throws `DocumentParseError`.
 */
export function parseStage(input: ParseStageInput): Promise<ParsedDocument<DocumentFormat>>;
export function parseStage<F extends string>(input: ParseStageInput<F>, parsers: ParserRegistry<F>): Promise<ParsedDocument<F>>;
export function parseStage(input: ParseStageInput<string>, parsers: ParserRegistry<string> = documentParsers): Promise<ParsedDocument<string>> {
  return parsers.parse({ format: input.format, data: input.content, ...(input.filename ? { filename: input.filename } : {}) });
}
