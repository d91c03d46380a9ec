import { decodeText } from '../decode-text.js';
import { defineParser, quotedName } from '../document-parser.js';

export const textParser = defineParser({
  format: 'text',
  extensions: ['txt', 'text'],
  mediaTypes: ['text/plain'],
  textual: true,
  parse: (data, { filename }) => ({ text: decodeText(data, `text file${quotedName(filename)}`), markup: 'plain' }),
});
