import { z } from 'zod';

/** Per-request fusion weights of a hybrid search (memories and documents alike). */
export const fusionWeightsSchema = z
  .strictObject({ vector: z.number().min(0).max(1000), text: z.number().min(0).max(1000), k: z.number().min(0).max(10_000).optional() })
  .refine((w) => w.vector + w.text > 0, 'vector and text must not both be 0');
