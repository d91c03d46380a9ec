import { z } from 'zod';
import { timeWindowSchema } from './time-window-schema.js';

/** What `POST /v1/turns/search` answers. */

const rankSchema = z.number().int().min(1).nullable();

export const turnHitSchema = z
  .object({
    conversationId: z.uuid(),
    turn: z.number().int().min(1).meta({ description: "The turn's number in its conversation." }),
    question: z.string().meta({ description: "The user's message; '' for an imported conversation's opening, which the assistant spoke." }),
    answer: z.string().meta({ description: "The agent's final answer ('' when it gave none)." }),
    at: z.iso.datetime().meta({ description: 'When the question was asked (an opening: when the assistant spoke).' }),
    agentId: z.string(),
    userId: z.string().nullable().meta({ description: 'The user of its conversation; null when none was named.' }),
    score: z.number().meta({ description: 'Hybrid: the fused (weighted RRF) score. Vector: cosine similarity. Text: BM25.' }),
    ranks: z
      .object({ vector: rankSchema, text: rankSchema })
      .meta({ description: "1-based rank in each side's candidates; null where the turn was not among them." }),
  })
  .meta({ id: 'TurnHit' });

export const conversationHitSchema = z
  .object({
    conversationId: z.uuid(),
    score: z.number().meta({
      description: "Weighted RRF over the sides: each side's weight / (k + the rank of the conversation's best turn among that side's candidates).",
    }),
    turns: z.array(turnHitSchema).meta({ description: 'Its turns among the candidates, best first.' }),
  })
  .meta({ id: 'ConversationHit' });

export const turnSearchReplySchema = z
  .union([
    z.object({ hits: z.array(turnHitSchema), timeWindow: timeWindowSchema }),
    z.object({ conversations: z.array(conversationHitSchema), timeWindow: timeWindowSchema }),
  ])
  .meta({ id: 'TurnSearchReply', description: '`hits` by default; `conversations` with `groupBy: "conversation"`.' });
