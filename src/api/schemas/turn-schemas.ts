import { z } from 'zod';
import { SEARCH_MODES } from '../../retrieval/search-mode.js';
import { asOfSchema } from './as-of-schema.js';
import { fusionWeightsSchema } from './fusion-weights-schema.js';
import { MEMORY_LIMITS, agentIdSchema, notBlank, storableString, userIdSchema } from './memory-schemas.js';

/** How turn hits are returned. */
export const TURN_GROUPINGS = ['turn', 'conversation'] as const;

/**
 * `POST /v1/turns/search`. Strict: turns have no tags, so a tag filter is a 400 naming it rather
 * than a filter silently not applied.
 */
export function searchTurnsBody(maxTopK: number) {
  return (
    z
      .strictObject({
        query: storableString(1, MEMORY_LIMITS.queryMaxChars).refine(notBlank, 'must not be blank'),
        agentId: agentIdSchema.optional().meta({ description: 'Whose conversations; default `default`.' }),
        userId: userIdSchema.optional().meta({ description: "Only this user's conversations; default every user's." }),
        conversationId: z.uuid().optional().meta({ description: "Only this conversation's turns." }),
        excludeConversationId: z.uuid().optional().meta({ description: "Every conversation's turns but this one's (as a chat turn recalls)." }),
        topK: z.number().int().min(1).max(maxTopK).default(MEMORY_LIMITS.topKDefault),
        mode: z.enum(SEARCH_MODES).default('hybrid'),
        minScore: z.number().min(-1).max(1).optional().meta({ description: 'A cosine-similarity threshold on the vector side (hybrid and vector modes).' }),
        weights: fusionWeightsSchema.optional(),
        asOf: asOfSchema.optional(),
        groupBy: z
          .enum(TURN_GROUPINGS)
          .default('turn')
          .meta({
            description:
              '`turn`: the best `topK` turns, one conversation never filling the list alone. `conversation`: the best `topK` ' +
              'conversations, ranked by their best turn on each side (the vector side counting double, its query vector moved ' +
              "toward its 10 nearest turns to find the sessions that speak of the subject in other words; a turn's vector score " +
              'and `minScore` are then against that vector), each with its turns among the candidates.',
          }),
      })
      // Refused rather than ignored: the client expects something these cannot give.
      .superRefine((body, ctx) => {
        if (body.mode === 'text' && body.minScore !== undefined) {
          ctx.addIssue({ code: 'custom', path: ['minScore'], message: 'is a cosine similarity; text mode has none (use hybrid or vector)' });
        }
        if (body.conversationId !== undefined && body.conversationId === body.excludeConversationId) {
          ctx.addIssue({ code: 'custom', path: ['excludeConversationId'], message: 'excludes the one conversation searched: nothing could match' });
        }
      })
  );
}
