import { z } from 'zod';
import { agentIdSchema, storableString, userIdSchema } from './memory-schemas.js';

export const EXTRACTION_REQUEST_LIMITS = { maxMessages: 50, messageMaxChars: 20_000 } as const;

export const extractMemoriesBody = z.strictObject({
  messages: z
    .array(
      z.strictObject({
        role: z.enum(['user', 'assistant']),
        content: storableString(1, EXTRACTION_REQUEST_LIMITS.messageMaxChars),
      }),
    )
    .min(1)
    .max(EXTRACTION_REQUEST_LIMITS.maxMessages),
  agentId: agentIdSchema.optional(),
  userId: userIdSchema.optional().meta({ description: "The user the facts are about; without it, they go to the agent's shared memories." }),
});

export const extractMemoriesReplySchema = z
  .object({
    decisions: z.array(
      z.object({
        event: z.enum(['ADD', 'UPDATE', 'INVALIDATE', 'NONE']),
        fact: z.string().meta({ description: 'The fact as the model extracted it.' }),
        content: z.string().optional().meta({ description: 'What the memory holds after an ADD or UPDATE.' }),
        key: z.string().optional().meta({ description: 'The memory added, changed, invalidated, or already holding the fact.' }),
        previousContent: z.string().optional(),
        status: z.enum(['applied', 'skipped']),
        reason: z.string().optional().meta({ description: 'Why a decision was skipped (a duplicate, an unknown id…).' }),
      }),
    ),
    failures: z.number().int().min(0).meta({ description: 'Steps or decisions skipped because the model failed or answered something unusable.' }),
  })
  .meta({ id: 'ExtractMemoriesReply' });
