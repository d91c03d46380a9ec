import { defineParser, quotedName } from '../document-parser.js';
import { DocumentParseError } from '../document-parse-error.js';
import { pdfToText } from '../pdf-to-text.js';

export const pdfParser = defineParser({
  format: 'pdf',
  extensions: ['pdf'],
  mediaTypes: ['application/pdf', 'application/x-pdf'],
  textual: false,
  async parse(data, { filename }) {
    const text = await pdfToText(typeof data === 'string' ? binaryStringToBytes(data) : data);
    // A PDF without text is almost always a scan, which says more than "contains no text".
    if (text.trim() === '') {
      throw new DocumentParseError('empty', `the PDF${quotedName(filename)} has no text layer (scanned pages need OCR before upload)`);
    }
    return { text, markup: 'plain' };
  },
});

function binaryStringToBytes(data: string): Uint8Array {
  const bytes = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const code = data.charCodeAt(i);
    if (code > 0xff) {
      throw new DocumentParseError('invalid_document', 'not a valid PDF: a PDF given as a string must be a binary (latin-1) string');
    }
    bytes[i] = code;
  }
  return bytes;
}
