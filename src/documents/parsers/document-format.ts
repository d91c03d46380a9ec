import { DocumentParseError } from './document-parse-error.js';

export const DOCUMENT_FORMATS = ['text', 'markdown', 'html', 'pdf'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

const BY_EXTENSION: Record<string, DocumentFormat> = {
  txt: 'text',
  text: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  pdf: 'pdf',
};

const BY_MIME_TYPE: Record<string, DocumentFormat> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'application/x-pdf': 'pdf',
};

export function isDocumentFormat(value: unknown): value is DocumentFormat {
  return typeof value === 'string' && (DOCUMENT_FORMATS as readonly string[]).includes(value);
}

/**
 * The format of an upload. The file extension wins over the MIME type because browsers and
 * `curl -F` label `.md` files `text/plain` or `application/octet-stream`, while the extension is
 * what the user chose; the MIME type decides only for names without a known extension.
 */
export function detectFormat(filename?: string | null, mimeType?: string | null): DocumentFormat {
  const extension = filename?.trim().toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  const byExtension = extension === undefined ? undefined : BY_EXTENSION[extension];
  if (byExtension) return byExtension;

  const essence = mimeType?.split(';')[0]?.trim().toLowerCase();
  const byMime = essence ? BY_MIME_TYPE[essence] : undefined;
  if (byMime) return byMime;

  const described = [filename ? `"${filename}"` : undefined, essence ? `type ${essence}` : undefined]
    .filter(Boolean)
    .join(', ');
  throw new DocumentParseError(
    'unsupported_format',
    `unsupported file type${described ? ` (${described})` : ''}: upload .txt, .md, .markdown, .html, .htm or .pdf`,
  );
}
