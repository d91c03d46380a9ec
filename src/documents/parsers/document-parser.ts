/** How a parser's text is written, which tells the chunker whether `#` lines are headings. */
export type TextMarkup = 'markdown' | 'plain';

export interface ParsedText {
  text: string;
  markup: TextMarkup;
}

export interface ParseContext {
  /** The upload's name, for error messages only. */
  filename?: string;
}

/**
 * One document format: its name, how uploads of it are recognised, and how its bytes become text.
 * Adding a format is a file exporting one of these and a line registering it in `document-parsers.ts`.
 */
export interface DocumentParser<F extends string = string> {
  /** The name stored with a document and accepted as `format` by the API. */
  readonly format: F;
  /** File name extensions, lower case without the dot, in the order error messages list them. */
  readonly extensions: readonly string[];
  /** Media types (essence only, lower case) that identify an upload without a known extension. */
  readonly mediaTypes: readonly string[];
  /** Whether the format is text a JSON body can carry; binary formats (PDF) come only as uploads. */
  readonly textual: boolean;
  /**
   * The document's text. `data` is file bytes, or a string taken as already-decoded text (a binary
   * format may accept a latin-1 string). Throws `DocumentParseError` for a corrupt document; text
   * that is blank is refused by the registry, unless the parser refuses it first with a better reason.
   */
  parse(data: string | Uint8Array, context: ParseContext): ParsedText | Promise<ParsedText>;
}

/** Infers the literal format name, so a registry built from parsers knows its formats' union. */
export const defineParser = <const F extends string>(parser: DocumentParser<F>): DocumentParser<F> => parser;

/** ` "name"` for error messages, or nothing when the upload has no name. */
export const quotedName = (filename: string | undefined): string => (filename ? ` "${filename}"` : '');
