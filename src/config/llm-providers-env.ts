import { z } from 'zod';

/** One OpenAI-compatible endpoint an agent can name as its `provider`. */
export const llmProviderEntrySchema = z.strictObject({
  baseURL: z.string().url(),
  apiKey: z.string().min(1).optional(),
});

export type LlmProviderEntry = z.output<typeof llmProviderEntrySchema>;

/**
 * LLM_PROVIDERS: a JSON object keyed by provider name, e.g.
 * `{"local":{"baseURL":"http://127.0.0.1:11434/v1"},"openai":{"baseURL":"https://api.openai.com/v1","apiKey":"sk-..."}}`.
 * Read into a Map, entry by entry: a provider named "__proto__" must stay a key.
 */
export const llmProvidersEnv = z
  .string()
  .optional()
  .transform((raw, ctx): Map<string, LlmProviderEntry> => {
    const providers = new Map<string, LlmProviderEntry>();
    if (raw === undefined) return providers;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `is not JSON: ${(error as Error).message}` });
      return z.NEVER;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object keyed by provider name' });
      return z.NEVER;
    }
    for (const [name, entry] of Object.entries(value)) {
      const parsed = llmProviderEntrySchema.safeParse(entry);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        const field = issue.path.length > 0 ? `.${issue.path.join('.')}` : '';
        ctx.addIssue({ code: 'custom', message: `${JSON.stringify(name)}${field}: ${issue.message} (each provider maps to {baseURL, apiKey?})` });
        return z.NEVER;
      }
      providers.set(name, parsed.data);
    }
    return providers;
  });
