import { decodeText } from '../decode-text.js';
import { defineParser, quotedName } from '../document-parser.js';

export const markdownParser = defineParser({
  format: 'markdown',
  extensions: ['md', 'markdown'],
  mediaTypes: ['text/markdown', 'text/x-markdown'],
  textual: true,
  parse: (data, { filename }) => ({ text: decodeText(data, `Markdown file${quotedName(filename)}`), markup: 'markdown' }),
});
