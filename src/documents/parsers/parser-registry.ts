import type { DocumentParser, ParseContext, TextMarkup } from './document-parser.js';
import { quotedName } from './document-parser.js';
import { DocumentParseError } from './document-parse-error.js';

export interface ParseDocumentInput<F extends string = string> {
  format: F;
  /** File bytes; a string is taken as already-decoded text, or for a PDF as a binary (latin-1) string. */
  data: string | Uint8Array;
  /** Only used in error messages. */
  filename?: string;
}

export interface ParsedDocument<F extends string = string> {
  text: string;
  /** The source format. */
  format: F;
  /** How `text` is written, which tells the chunker whether `#` lines are headings. */
  markup: TextMarkup;
}

/**
 * The formats documents can be ingested from. Everything that depends on the set of formats (the
 * names the API accepts, detection of an upload's format, the lists in error messages) asks the
 * registry, so a format is added in one place. `F` is the union of the registered format names.
 */
export interface ParserRegistry<F extends string = string> {
  /** Adds a format; its name, extensions and media types must not be registered already. */
  register<G extends string>(parser: DocumentParser<G>): ParserRegistry<F | G>;
  /** Format names in registration order. */
  readonly formats: readonly F[];
  /** The formats whose content can be sent as text (in a JSON body). */
  readonly textFormats: readonly F[];
  has(format: string): format is F;
  /**
   * The format of an upload. The file extension wins over the media type because browsers and
   * `curl -F` label `.md` files `text/plain` or `application/octet-stream`, while the extension is
   * what the user chose; the media type decides only for names without a known extension.
   */
  detect(filename?: string | null, mimeType?: string | null): F;
  /** The document's text; a blank one is refused (`empty`), an unknown format too (`unsupported_format`). */
  parse(input: ParseDocumentInput<string>): Promise<ParsedDocument<F>>;
}

export function createParserRegistry(): ParserRegistry<never> {
  const parsers = new Map<string, DocumentParser>();
  const byExtension = new Map<string, DocumentParser>();
  const byMediaType = new Map<string, DocumentParser>();

  const registry: ParserRegistry<string> = {
    register(parser) {
      const taken = [
        parsers.has(parser.format) ? `format ${parser.format}` : undefined,
        ...parser.extensions.map((e) => (byExtension.has(e.toLowerCase()) ? `extension .${e}` : undefined)),
        ...parser.mediaTypes.map((m) => (byMediaType.has(m.toLowerCase()) ? `media type ${m}` : undefined)),
      ].filter((t) => t !== undefined);
      // Two parsers claiming one name would make detection depend on registration order.
      if (taken.length > 0) throw new Error(`cannot register the ${parser.format} parser: ${taken.join(', ')} already registered`);
      parsers.set(parser.format, parser);
      for (const e of parser.extensions) byExtension.set(e.toLowerCase(), parser);
      for (const m of parser.mediaTypes) byMediaType.set(m.toLowerCase(), parser);
      return registry;
    },

    get formats() {
      return [...parsers.keys()];
    },

    get textFormats() {
      return [...parsers.values()].filter((p) => p.textual).map((p) => p.format);
    },

    has: (format): format is string => parsers.has(format),

    detect(filename, mimeType) {
      const extension = filename
        ?.trim()
        .toLowerCase()
        .match(/\.([a-z0-9]+)$/)?.[1];
      const byName = extension === undefined ? undefined : byExtension.get(extension);
      if (byName) return byName.format;

      const essence = mimeType?.split(';')[0]?.trim().toLowerCase();
      const byType = essence ? byMediaType.get(essence) : undefined;
      if (byType) return byType.format;

      const described = [filename ? `"${filename}"` : undefined, essence ? `type ${essence}` : undefined].filter(Boolean).join(', ');
      const extensions = [...byExtension.keys()].map((e) => `.${e}`);
      throw new DocumentParseError('unsupported_format', `unsupported file type${described ? ` (${described})` : ''}: upload ${orList(extensions)}`);
    },

    async parse({ format, data, filename }) {
      const parser = parsers.get(format);
      if (!parser) {
        throw new DocumentParseError('unsupported_format', `unsupported document format: ${format}; supported: ${[...parsers.keys()].join(', ')}`);
      }
      const context: ParseContext = filename ? { filename } : {};
      const { text, markup } = await parser.parse(data, context);
      if (text.trim() === '') throw new DocumentParseError('empty', `the document${quotedName(filename)} contains no text`);
      return { text, format, markup };
    },
  };
  // The union grows with each registration; at run time it is the same object.
  return registry as ParserRegistry<never>;
}

/** The formats a registry knows, as a union of names. */
export type FormatOf<R> = R extends ParserRegistry<infer F> ? F : never;

/** "a, b or c". */
function orList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}
