import type { DocumentFormat } from './parsers/document-format.js';

export interface StoredDocument {
  id: string;
  title: string;
  source: string | null;
  format: DocumentFormat;
  contentHash: string;
  tags: string[];
  metadata: Record<string, unknown>;
  /** Characters of the extracted text. */
  textLength: number;
  chunkCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface IngestResult {
  document: StoredDocument;
  /**
   * `created`: a new document. `replaced`: the document with this `source` now holds the new
   * content (same id, new chunks). `unchanged`: a document with identical text already existed and
   * is returned as it is; nothing was written.
   */
  status: 'created' | 'replaced' | 'unchanged';
}

export interface StoredChunk {
  id: string;
  documentId: string;
  index: number;
  text: string;
  headingPath: string[];
  start: number;
  end: number;
  tokenCount: number;
}

