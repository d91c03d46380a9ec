import { z } from 'zod';
import { DOCUMENT_FORMATS } from '../../documents/parsers/document-format.js';

/** What the document and knowledge-search routes answer. */

const rankSchema = z.number().int().min(1).nullable();
const headingPathSchema = z.array(z.string()).meta({ description: 'Headings from the document\'s root down to the chunk, e.g. `["Install", "Linux"]`.' });
const offsetSchema = z.number().int().min(0);

export const documentSchema = z
  .object({
    id: z.uuid(),
    title: z.string(),
    source: z.string().nullable().meta({ description: 'Where it came from; a later ingest of the same source replaces it.' }),
    format: z.enum(DOCUMENT_FORMATS),
    contentHash: z.string().meta({ description: 'SHA-256 of the normalised extracted text, hex.' }),
    tags: z.array(z.string()),
    metadata: z.record(z.string(), z.unknown()),
    textLength: z.number().int().min(0).meta({ description: 'Characters of the extracted text.' }),
    chunkCount: z.number().int().min(0),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Document' });

export const ingestReplySchema = z
  .object({
    document: documentSchema,
    status: z.enum(['created', 'replaced', 'unchanged']).meta({
      description:
        '`created` (201): a new document. `replaced` (200): the document with this `source` now holds the new text, same id. ' +
        '`unchanged` (200): identical text was already stored; nothing was written.',
    }),
  })
  .meta({ id: 'IngestReply' });

export const documentReplySchema = z.object({ document: documentSchema }).meta({ id: 'DocumentReply' });

export const documentPageSchema = z.object({ items: z.array(documentSchema), nextCursor: z.string().nullable() }).meta({ id: 'DocumentPage' });

export const chunkSchema = z
  .object({
    id: z.uuid(),
    documentId: z.uuid(),
    index: z.number().int().min(0),
    text: z.string(),
    headingPath: headingPathSchema,
    start: offsetSchema.meta({ description: "Character offset of the chunk in the document's extracted text." }),
    end: offsetSchema,
    tokenCount: z.number().int().min(0),
  })
  .meta({ id: 'Chunk' });

export const chunkPageSchema = z.object({ items: z.array(chunkSchema), nextCursor: z.string().nullable() }).meta({ id: 'ChunkPage' });

export const searchHitSchema = z
  .object({
    documentId: z.uuid(),
    title: z.string(),
    chunkId: z.uuid(),
    chunkIndex: z.number().int().min(0),
    headingPath: headingPathSchema,
    start: offsetSchema,
    end: offsetSchema,
    text: z.string(),
    snippet: z.string().meta({ description: 'The part of the chunk around the first query term, with `…` where it was cut.' }),
    score: z.number().meta({ description: 'First-stage score: fused (hybrid), cosine (vector) or BM25 (text).' }),
    ranks: z
      .object({ vector: rankSchema, text: rankSchema })
      .meta({ description: "1-based rank of the hit's passage in each retriever's candidates; null where it was not among them." }),
    rerankScore: z.number().optional().meta({ description: "The reranker's score, when one ran; hits are in its order." }),
  })
  .meta({ id: 'SearchHit' });

export const searchReplySchema = z.object({ hits: z.array(searchHitSchema) }).meta({ id: 'SearchReply' });
