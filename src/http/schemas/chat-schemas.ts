import { z } from 'zod';
import { DOCUMENT_LIMITS } from './document-schemas.js';
import { agentIdSchema, tagsSchema, userIdSchema } from './memory-schemas.js';

export const CHAT_LIMITS = {
  messageMaxChars: 32_000,
} as const;

const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const messageSchema = z
  .string()
  .min(1)
  .max(CHAT_LIMITS.messageMaxChars)
  .refine((s) => s.trim() !== '', 'must not be blank')
  // NUL is refused because the message may be saved as a memory, and Postgres text cannot hold it.
  .refine((s) => !s.includes('\u0000'), 'must not contain NUL (\\u0000) characters')
  .refine((s) => !LONE_SURROGATE.test(s), 'must not contain unpaired UTF-16 surrogates');

/** `POST /v1/chat`; strict, so a misspelt filter is a 400 rather than an unfiltered answer. */
export function chatBody(maxTopK: number) {
  return z.strictObject({
    message: messageSchema,
    conversationId: z.uuid().optional(),
    agentId: agentIdSchema.optional(),
    userId: userIdSchema
      .optional()
      .meta({
        description:
          "The user the turn is with: memories are recalled from theirs and the agent's shared ones, the memory tools write theirs, " +
          'past turns come from their other conversations. A conversation keeps the user of its first turn: continuing it with ' +
          'another (or none) is a 404. Absent: no user, and only shared memories are recalled.',
      }),
    tagsAny: tagsSchema.optional(),
    tagsAll: tagsSchema.optional(),
    tagsNone: tagsSchema.optional(),
    topK: z.number().int().min(1).max(maxTopK).optional(),
    candidateK: z.number().int().min(1).max(DOCUMENT_LIMITS.candidateKMax).optional(),
    stream: z.boolean().optional(),
  });
}

export type ChatBody = z.output<ReturnType<typeof chatBody>>;
