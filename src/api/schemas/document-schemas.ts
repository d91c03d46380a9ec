import { z } from 'zod';
import { RERANKERS, type RerankerChoice } from '../../retrieval/rerank/reranker-choice.js';
import { SEARCH_MODES } from '../../retrieval/search-mode.js';
import { DOCUMENT_FORMATS, TEXT_DOCUMENT_FORMATS } from '../../documents/parsers/document-format.js';
import { fusionWeightsSchema } from './fusion-weights-schema.js';
import { MEMORY_LIMITS, metadataSchema, notBlank, queryInt, storableString, tagsSchema } from './memory-schemas.js';

/** Every input limit of the document and search routes, in one place. */
export const DOCUMENT_LIMITS = {
  titleMaxChars: 1000,
  sourceMaxChars: 2048,
  /** Characters of `text` in a JSON ingest; files are bounded by MAX_UPLOAD_BYTES instead. */
  textMaxChars: 5_000_000,
  chunkTokensMin: 8,
  chunkTokensMax: 8192,
  passageTokensMax: 65_536,
  candidateKMax: 1000,
  pageDefault: 50,
  pageMax: 200,
  chunkPageDefault: 100,
  chunkPageMax: 1000,
  cursorMaxChars: 512,
} as const;

const chunkingFields = {
  maxTokens: z.number().int().min(DOCUMENT_LIMITS.chunkTokensMin).max(DOCUMENT_LIMITS.chunkTokensMax).optional(),
  overlapTokens: z
    .number()
    .int()
    .min(0)
    .max(DOCUMENT_LIMITS.chunkTokensMax - 1)
    .optional(),
  passageTokens: z
    .number()
    .int()
    .min(1)
    .max(DOCUMENT_LIMITS.passageTokensMax)
    .optional()
    .meta({ description: 'Tokens per BM25 passage (consecutive chunks scored together), default 512; at most the chunk size: one passage per chunk.' }),
};

const documentFields = {
  title: storableString(1, DOCUMENT_LIMITS.titleMaxChars).refine(notBlank, 'must not be blank').optional(),
  tags: tagsSchema.optional(),
  metadata: metadataSchema.optional(),
  source: storableString(1, DOCUMENT_LIMITS.sourceMaxChars).refine(notBlank, 'must not be blank').optional(),
  ...chunkingFields,
};

const overlapBelowMax = (b: { maxTokens?: number; overlapTokens?: number }) =>
  b.maxTokens === undefined || b.overlapTokens === undefined || b.overlapTokens < b.maxTokens;
const OVERLAP_ISSUE = { path: ['overlapTokens'], message: 'must be less than maxTokens' };

const asyncField = z
  .boolean()
  .optional()
  .meta({ description: 'Answer `202 {job}` at once and ingest in the background (also `Prefer: respond-async`); follow it at `/v1/jobs/{id}`.' });

const textDocumentFields = {
  text: storableString(1, DOCUMENT_LIMITS.textMaxChars).refine(notBlank, 'must not be blank'),
  format: z.enum(TEXT_DOCUMENT_FORMATS).default('text'),
  ...documentFields,
};

/** `POST /v1/documents` with a JSON body: the text itself, in a text format. */
export const ingestJsonBody = z.strictObject({ ...textDocumentFields, async: asyncField }).refine(overlapBelowMax, OVERLAP_ISSUE);

const urlDocumentFields = {
  url: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).max(DOCUMENT_LIMITS.sourceMaxChars),
  format: z.enum(DOCUMENT_FORMATS).optional().meta({ description: "Default: from the reply's content type." }),
  ...documentFields,
};

/** `POST /v1/documents` with `{url}`: fetched and ingested by a worker, always as a job. */
export const ingestUrlBody = z
  .strictObject({ ...urlDocumentFields, async: z.literal(true).optional().meta({ description: 'A URL is always ingested as a job.' }) })
  .refine(overlapBelowMax, OVERLAP_ISSUE);

/** At most this many documents in one batch. */
export const BATCH_MAX_ITEMS = 1000;

/** `POST /v1/documents` with `{documents: [...]}`: one batch job, an item per document (text or URL). */
export const ingestBatchBody = z.strictObject({
  documents: z
    .array(
      z.union([
        z.strictObject(textDocumentFields).refine(overlapBelowMax, OVERLAP_ISSUE),
        z.strictObject(urlDocumentFields).refine(overlapBelowMax, OVERLAP_ISSUE),
      ]),
    )
    .min(1)
    .max(BATCH_MAX_ITEMS),
  async: z.literal(true).optional().meta({ description: 'A batch is always a job.' }),
});

/** A form field holding a whole number. */
const formInt = (schema: z.ZodNumber) => z.string().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(schema);

/**
 * The fields of a multipart upload beside `file`, as strings: `tags` repeated, comma-separated
 * or a JSON array; `metadata` a JSON object.
 */
export const ingestFormFields = z
  .strictObject({
    title: documentFields.title,
    source: documentFields.source,
    tags: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        const values = Array.isArray(v) ? v : [v];
        const out: unknown[] = [];
        for (const value of values) {
          if (value.trim().startsWith('[')) {
            try {
              out.push(...(JSON.parse(value) as unknown[]));
            } catch {
              ctx.addIssue({ code: 'custom', message: 'must be a JSON array of strings, or tags separated by commas' });
              return z.NEVER;
            }
          } else {
            out.push(
              ...value
                .split(',')
                .map((t) => t.trim())
                .filter((t) => t !== ''),
            );
          }
        }
        return out;
      })
      .pipe(tagsSchema.optional()),
    metadata: z
      .string()
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        try {
          return JSON.parse(v) as unknown;
        } catch {
          ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
          return z.NEVER;
        }
      })
      .pipe(metadataSchema.optional()),
    format: z.enum(DOCUMENT_FORMATS).optional(),
    async: z
      .enum(['true', 'false'])
      .optional()
      .transform((v) => v === 'true'),
    maxTokens: formInt(chunkingFields.maxTokens.unwrap()).optional(),
    overlapTokens: formInt(chunkingFields.overlapTokens.unwrap()).optional(),
    passageTokens: formInt(chunkingFields.passageTokens.unwrap()).optional(),
  })
  .refine(overlapBelowMax, OVERLAP_ISSUE);

export const documentIdParams = z.strictObject({ id: z.uuid('must be a document id (a UUID)') });

const tagFilterFields = {
  tagsAny: tagsSchema.optional(),
  tagsAll: tagsSchema.optional(),
  tagsNone: tagsSchema.optional(),
};

export const listDocumentsQuery = z.strictObject({
  ...tagFilterFields,
  limit: queryInt(1, DOCUMENT_LIMITS.pageMax).default(DOCUMENT_LIMITS.pageDefault),
  cursor: z.string().max(DOCUMENT_LIMITS.cursorMaxChars).optional(),
});

export const listChunksQuery = z.strictObject({
  limit: queryInt(1, DOCUMENT_LIMITS.chunkPageMax).default(DOCUMENT_LIMITS.chunkPageDefault),
  cursor: z.string().max(DOCUMENT_LIMITS.cursorMaxChars).optional(),
});

/**
 * `rerankers` are those this server can run (KnowledgeSearch.rerankers); asking for another is a
 * 400 naming `reranker`. Leaving it out uses the search's default (RERANKER_DEFAULT).
 */
export function searchBody(maxTopK: number, rerankers: readonly RerankerChoice[] = ['none', 'lexical']) {
  return z.strictObject({
    query: storableString(1, MEMORY_LIMITS.queryMaxChars).refine(notBlank, 'must not be blank'),
    topK: z.number().int().min(1).max(maxTopK).default(MEMORY_LIMITS.topKDefault),
    candidateK: z.number().int().min(1).max(DOCUMENT_LIMITS.candidateKMax).optional(),
    mode: z.enum(SEARCH_MODES).default('hybrid'),
    reranker: z
      .enum(RERANKERS)
      .refine((r) => rerankers.includes(r), `is not configured on this server (available: ${rerankers.join(', ')}); cross-encoder needs RERANKER_MODEL`)
      .optional(),
    weights: fusionWeightsSchema.optional(),
    ...tagFilterFields,
  });
}
