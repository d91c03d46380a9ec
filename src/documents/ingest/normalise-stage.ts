import { createHash } from 'node:crypto';
import { normalizeTags } from '../../retrieval/tags.js';
import { findMarkdownHeadings } from '../chunking/markdown-headings.js';
import type { TextMarkup } from '../parsers/document-parser.js';
import type { DocumentFormat } from '../parsers/document-format.js';
import type { ParsedDocument } from '../parsers/parser-registry.js';

export interface NormaliseStageInput {
  /** Default: the file name without extension, else the first heading, else the first line. */
  title?: string;
  filename?: string;
  tags?: readonly string[];
  metadata?: Record<string, unknown>;
  source?: string | null;
}

/** A document as it is hashed and stored: its text normalised, its fields defaulted. */
export interface NormalisedDocument<F extends string = DocumentFormat> {
  format: F;
  markup: TextMarkup;
  /** See `normalizeDocumentText`. */
  text: string;
  /** Of `text`: identical text is stored once per tenant. */
  contentHash: string;
  title: string;
  tags: string[];
  metadata: Record<string, unknown>;
  source: string | null;
}

/** Text as it is hashed, stored and chunked: NFC, `\n` line ends, no outer white space. */
export function normalizeDocumentText(text: string): string {
  return text.normalize('NFC').replace(/\r\n?/g, '\n').trim();
}

export const contentHashOf = (normalizedText: string): string => createHash('sha256').update(normalizedText, 'utf8').digest('hex');

/** Stage 2: normalised text, its hash, and the title, tags, metadata and source to store. */
export function normaliseStage<F extends string>(parsed: ParsedDocument<F>, input: NormaliseStageInput): NormalisedDocument<F> {
  const text = normalizeDocumentText(parsed.text);
  return {
    format: parsed.format,
    markup: parsed.markup,
    text,
    contentHash: contentHashOf(text),
    // Cut by code points: a UTF-16 cut could split a surrogate pair, which Postgres stores as U+FFFD.
    title: Array.from(input.title?.trim() || defaultTitle(text, parsed.markup, input.filename))
      .slice(0, 1000)
      .join(''),
    tags: normalizeTags(input.tags),
    metadata: input.metadata ?? {},
    source: input.source ?? null,
  };
}

function defaultTitle(text: string, markup: TextMarkup, filename: string | undefined): string {
  const fromName = filename
    ?.replace(/^.*[\\/]/, '')
    .replace(/\.[^.]+$/, '')
    .trim();
  if (fromName) return fromName;
  if (markup === 'markdown') {
    const [heading] = findMarkdownHeadings(text);
    if (heading?.text.trim()) return heading.text.trim();
  }
  const firstLine =
    text
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? 'Untitled';
  const points = Array.from(firstLine);
  return points.length > 120 ? `${points.slice(0, 117).join('')}...` : firstLine;
}
