import { decodeText, normalizeNewlines } from './decode-text.js';
import type { DocumentFormat } from './document-format.js';
import { DocumentParseError } from './document-parse-error.js';
import { htmlToMarkdown } from './html-to-markdown.js';
import { pdfToText } from './pdf-to-text.js';

export interface ParseDocumentInput {
  format: DocumentFormat;
  /** File bytes; a string is taken as already-decoded text, or for a PDF as a binary (latin-1) string. */
  data: string | Uint8Array;
  /** Only used in error messages. */
  filename?: string;
}

export interface ParsedDocument {
  text: string;
  /** The source format. */
  format: DocumentFormat;
  /** How `text` is written, which tells the chunker whether `#` lines are headings. */
  markup: 'markdown' | 'plain';
}

export async function parseDocument(input: ParseDocumentInput): Promise<ParsedDocument> {
  const { format, data, filename } = input;
  const label = filename ? ` "${filename}"` : '';
  let text: string;
  let markup: ParsedDocument['markup'];
  switch (format) {
    case 'text':
      text = decodeText(data, `text file${label}`);
      markup = 'plain';
      break;
    case 'markdown':
      text = decodeText(data, `Markdown file${label}`);
      markup = 'markdown';
      break;
    case 'html':
      text = normalizeNewlines(htmlToMarkdown(decodeText(data, `HTML file${label}`)));
      markup = 'markdown';
      break;
    case 'pdf':
      text = await pdfToText(typeof data === 'string' ? binaryStringToBytes(data) : data);
      markup = 'plain';
      break;
    default:
      throw new DocumentParseError('unsupported_format', `unsupported document format: ${String(format satisfies never)}`);
  }
  if (text.trim() === '') {
    throw new DocumentParseError(
      'empty',
      format === 'pdf'
        ? `the PDF${label} has no text layer (scanned pages need OCR before upload)`
        : `the document${label} contains no text`,
    );
  }
  return { text, format, markup };
}

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
