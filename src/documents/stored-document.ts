import type { Chunk } from './chunker.js';
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

/** A chunk as the chunker cut it, stored under its document. */
export interface StoredChunk extends Chunk {
  id: string;
  documentId: string;
}
