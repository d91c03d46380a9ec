import { decodeText, normalizeNewlines } from '../decode-text.js';
import { defineParser, quotedName } from '../document-parser.js';
import { htmlToMarkdown } from '../html-to-markdown.js';

/** A page becomes Markdown, so the chunker can follow its sections. */
export const htmlParser = defineParser({
  format: 'html',
  extensions: ['html', 'htm'],
  mediaTypes: ['text/html', 'application/xhtml+xml'],
  textual: true,
  parse: (data, { filename }) => ({
    text: normalizeNewlines(htmlToMarkdown(decodeText(data, `HTML file${quotedName(filename)}`))),
    markup: 'markdown',
  }),
});
