import { z } from 'zod';

/** One model's overrides of the deployment's compaction settings; fields left out keep the deployment's. */
export const modelCompactionSchema = z.strictObject({
  contextWindow: z.number().int().min(256).max(100_000_000).optional(),
  outputReserve: z.number().int().min(0).max(100_000_000).optional(),
  triggerShare: z.number().gt(0).max(1).optional(),
  recentMessages: z.number().int().min(0).max(10_000).optional(),
});

export type ModelCompaction = z.output<typeof modelCompactionSchema>;

/**
 * COMPACTION_MODELS: a JSON object keyed by model name (as in LLM_MODEL), e.g.
 * `{"gpt-4o-mini":{"contextWindow":128000,"outputReserve":4096},"llama3.1:8b":{"contextWindow":8192}}`.
 */
export const compactionModelsEnv = z
  .string()
  .optional()
  .transform((raw, ctx): Map<string, ModelCompaction> => {
    const models = new Map<string, ModelCompaction>();
    if (raw === undefined) return models;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `is not JSON: ${(error as Error).message}` });
      return z.NEVER;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object keyed by model name' });
      return z.NEVER;
    }
    // Entry by entry into a Map, not through z.record: a model named "__proto__" must stay a key.
    for (const [model, settings] of Object.entries(value)) {
      const parsed = modelCompactionSchema.safeParse(settings);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        const field = issue.path.length > 0 ? `.${issue.path.join('.')}` : '';
        ctx.addIssue({
          code: 'custom',
          message: `${JSON.stringify(model)}${field}: ${issue.message} (each model maps to {contextWindow, outputReserve, triggerShare, recentMessages})`,
        });
        return z.NEVER;
      }
      models.set(model, parsed.data);
    }
    return models;
  });
