import { z } from 'zod';

export const providerNameParams = z.strictObject({ name: z.string().min(1).max(200) });

const providerSchema = z
  .object({
    name: z.string().meta({ description: "`default` (LLM_BASE_URL's, or OpenAI's), or one of LLM_PROVIDERS' names: what an agent's `provider` names." }),
    baseURL: z.string(),
    defaultModel: z.string().nullable().meta({ description: 'The model an agent naming none runs (LLM_MODEL); null when none is configured.' }),
  })
  .meta({ id: 'Provider', description: 'A configured OpenAI-compatible provider; its key is never shown.' });

export const providerListSchema = z.object({ providers: z.array(providerSchema) }).meta({ id: 'ProviderList' });

export const providerModelListSchema = z
  .object({
    provider: z.string(),
    models: z.array(
      z.object({
        id: z.string().meta({ description: "What an agent's `model` names." }),
        ownedBy: z.string().nullable(),
        created: z.number().nullable().meta({ description: 'Unix seconds, as the provider says.' }),
      }),
    ),
    fetchedAt: z.iso.datetime().meta({ description: 'When the provider was asked; its list is kept a few minutes.' }),
  })
  .meta({ id: 'ProviderModelList' });
