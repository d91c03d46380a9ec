import { z } from 'zod';
import { errorReplySchema } from './error-reply-schemas.js';

/** What the probes answer: `/healthz` and `/readyz`. */

export const healthReplySchema = z.object({ status: z.literal('ok') }).meta({ id: 'HealthReply' });

const checkSchema = z
  .object({
    ok: z.boolean(),
    reason: z.string().optional().meta({ description: 'Why not, when not ok.' }),
    durationMs: z.number().min(0),
  })
  .meta({ id: 'ReadinessCheck' });

const checksSchema = z.object({ database: checkSchema, embedder: checkSchema });

export const readyReplySchema = z.object({ status: z.literal('ready'), checks: checksSchema }).meta({ id: 'ReadyReply' });

export const notReadyReplySchema = errorReplySchema
  .extend({ checks: checksSchema })
  .meta({ id: 'NotReadyReply', description: 'Code `not_ready`; `details` names each failing check.' });
