import { DocumentParseError } from './document-parse-error.js';

/**
 * Bytes of a text file to a string with `\n` line ends. UTF-8 is tried strictly first; text that
 * is not valid UTF-8 is almost always Windows-1252/Latin-1 from older tools, which decodes any byte,
 * so that is the fallback rather than an error. A NUL byte means the file is binary (a mislabelled
 * .docx, an image), which would otherwise be indexed as garbage.
 */
export function decodeText(data: string | Uint8Array, what = 'text file'): string {
  let text: string;
  if (typeof data === 'string') {
    text = data.charCodeAt(0) === 0xfeff ? data.slice(1) : data;
  } else if (data[0] === 0xff && data[1] === 0xfe) {
    text = new TextDecoder('utf-16le').decode(data);
  } else if (data[0] === 0xfe && data[1] === 0xff) {
    text = new TextDecoder('utf-16be').decode(data);
  } else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(data);
    } catch {
      text = decodeWindows1252(data);
    }
  }
  if (text.includes('\u0000')) {
    throw new DocumentParseError('invalid_document', `not a valid ${what}: it contains binary data`);
  }
  return normalizeNewlines(text);
}

export function normalizeNewlines(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

// Node 20's TextDecoder('windows-1252') decodes as ISO-8859-1, turning the 0x80-0x9F range
// (€, curly quotes, dashes: the characters that make such files non-UTF-8 in the first place)
// into control characters; WHATWG's mapping of that range is spelled out here.
const WINDOWS_1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

function decodeWindows1252(data: Uint8Array): string {
  let out = '';
  for (let i = 0; i < data.length; i += 8192) {
    const codes = Array.from(data.subarray(i, i + 8192), (byte) => (byte >= 0x80 && byte <= 0x9f ? WINDOWS_1252_HIGH.charCodeAt(byte - 0x80) : byte));
    out += String.fromCharCode(...codes);
  }
  return out;
}
