import { htmlParser } from './formats/html-parser.js';
import { markdownParser } from './formats/markdown-parser.js';
import { pdfParser } from './formats/pdf-parser.js';
import { textParser } from './formats/text-parser.js';
import { createParserRegistry } from './parser-registry.js';

/**
 * A registry of the built-in formats, in the order error messages list them. A fresh one for
 * whoever needs to add formats of their own (tests) without changing the shared one.
 */
export const createDocumentParsers = () => createParserRegistry().register(textParser).register(markdownParser).register(htmlParser).register(pdfParser);

/** The formats this server ingests. */
export const documentParsers = createDocumentParsers();
