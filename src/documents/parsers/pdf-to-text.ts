import { DocumentParseError } from './document-parse-error.js';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

// pdf.js is several megabytes of code: load it on the first PDF, not when the server starts.
let pdfjs: Promise<PdfJs> | undefined;
const loadPdfJs = () => (pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs'));

/** Typographic ligatures from PDF fonts would otherwise split words for BM25 ("ﬁnding"). */
const LIGATURES: Record<string, string> = { ﬀ: 'ff', ﬁ: 'fi', ﬂ: 'fl', ﬃ: 'ffi', ﬄ: 'ffl', ﬅ: 'st', ﬆ: 'st' };

export interface PdfTextOptions {
  /** Stop after this many pages: a guard against huge uploads tying up the process. */
  maxPages?: number;
}

/**
 * Plain text of a PDF's text layer, one line per text line and a blank line between pages, so the
 * chunker treats a page break as a paragraph break. Scanned pages have no text layer (no OCR here).
 */
export async function pdfToText(data: Uint8Array, options: PdfTextOptions = {}): Promise<string> {
  const { getDocument, VerbosityLevel } = await loadPdfJs();
  // pdf.js may transfer (detach) the buffer it is given; the caller's bytes stay untouched.
  const task = getDocument({
    data: new Uint8Array(data),
    verbosity: VerbosityLevel.ERRORS,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
  });
  let doc: Awaited<typeof task.promise>;
  try {
    doc = await task.promise;
  } catch (error) {
    await task.destroy().catch(() => undefined);
    throw toParseError(error);
  }
  try {
    const pages: string[] = [];
    const last = Math.min(doc.numPages, options.maxPages ?? Number.POSITIVE_INFINITY);
    for (let p = 1; p <= last; p++) {
      const page = await doc.getPage(p);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (!('str' in item)) continue;
        text += item.str;
        if (item.hasEOL) text += '\n';
      }
      page.cleanup();
      pages.push(tidyPage(text));
    }
    return pages.filter((page) => page !== '').join('\n\n');
  } catch (error) {
    throw toParseError(error);
  } finally {
    await doc.destroy().catch(() => undefined);
  }
}

function tidyPage(text: string): string {
  return text
    .replace(/[\uFB00-\uFB06]/g, (ch) => LIGATURES[ch] ?? ch)
    .replace(/\u0000/g, '')
    .replace(/[ \t\u00a0]+\n/g, '\n')
    .replace(/[ \t\u00a0]{2,}/g, ' ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function toParseError(error: unknown): DocumentParseError {
  if (error instanceof DocumentParseError) return error;
  const name = (error as { name?: unknown } | null)?.name;
  const detail = error instanceof Error ? error.message : String(error);
  if (name === 'PasswordException') {
    return new DocumentParseError('encrypted', 'the PDF is password-protected: upload an unprotected copy', { cause: error });
  }
  return new DocumentParseError('invalid_document', `not a valid PDF: ${detail}`, { cause: error });
}
