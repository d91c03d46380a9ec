import { z } from 'zod';
import { REASONING_EFFORTS } from '../llm/reasoning.js';

/** What an agent (or one `/v1/chat` request) asks of its model beyond temperature; the names are the API's. */

export const SAMPLING_LIMITS = { stopMax: 4, stopMaxChars: 256, maxTokensMax: 1_000_000, maxContinuations: 5 } as const;

export const samplingSchema = z
  .strictObject({
    maxTokens: z.number().int().min(1).max(SAMPLING_LIMITS.maxTokensMax).optional().meta({
      description: 'Output tokens per model call at most (`max_tokens`, or `max_completion_tokens` where the provider wants it).',
    }),
    topP: z.number().gt(0).max(1).optional().meta({ description: 'Nucleus sampling (`top_p`).' }),
    stop: z
      .array(z.string().min(1).max(SAMPLING_LIMITS.stopMaxChars))
      .max(SAMPLING_LIMITS.stopMax)
      .optional()
      .meta({ description: 'Up to 4 sequences that end the reply (`stop`).' }),
    seed: z.number().int().optional().meta({ description: 'Asks for repeatable sampling where the provider supports it (`seed`).' }),
    presencePenalty: z.number().min(-2).max(2).optional().meta({ description: '`presence_penalty`.' }),
    frequencyPenalty: z.number().min(-2).max(2).optional().meta({ description: '`frequency_penalty`.' }),
  })
  .meta({ id: 'Sampling' });

export const reasoningSchema = z
  .strictObject({
    effort: z
      .enum(REASONING_EFFORTS)
      .meta({ description: "Sent as `reasoning_effort`; models that do not reason ignore it or refuse it (the provider's error)." }),
  })
  .meta({ id: 'Reasoning' });

export const truncationSchema = z
  .strictObject({
    maxContinuations: z.number().int().min(0).max(SAMPLING_LIMITS.maxContinuations).optional().meta({
      description: 'A reply cut by the output limit is continued this many times at most (default 2); still cut, the turn ends with stopReason `max_tokens`.',
    }),
  })
  .meta({ id: 'Truncation' });
