import { z } from 'zod';

/** What `POST /v1/turns/search` answers. */

const rankSchema = z.number().int().min(1).nullable();

export const turnHitSchema = z
  .object({
    conversationId: z.uuid(),
    turn: z.number().int().min(1).meta({ description: "The turn's number in its conversation." }),
    question: z.string().meta({ description: "The user's message." }),
    answer: z.string().meta({ description: "The agent's final answer ('' when it gave none)." }),
    at: z.iso.datetime().meta({ description: 'When the question was asked.' }),
    agentId: z.string(),
    userId: z.string().nullable().meta({ description: 'The user of its conversation; null when none was named.' }),
    score: z.number().meta({ description: 'Hybrid: the fused (weighted RRF) score. Vector: cosine similarity. Text: BM25.' }),
    ranks: z
      .object({ vector: rankSchema, text: rankSchema })
      .meta({ description: "1-based rank in each side's candidates; null where the turn was not among them." }),
  })
  .meta({ id: 'TurnHit' });

export const turnSearchReplySchema = z.object({ hits: z.array(turnHitSchema) }).meta({ id: 'TurnSearchReply' });
