import { z } from 'zod';
import { tagsSchema } from '../retrieval/tags.js';
import { storable } from '../text/storable-string.js';
import { RERANKERS } from '../retrieval/rerank/reranker-choice.js';
import { reasoningSchema, samplingSchema, truncationSchema } from './model-settings.js';
import { blockTemplatesSchema } from '../blocks/block-fields.js';
import { castSchema, delegationSchema } from './cast-settings.js';

/** The chat's built-in tools, by the names the model sees; an agent's tool policy speaks of these. */
export const BUILT_IN_TOOLS = [
  'search_memories',
  'save_memory',
  'delete_memory',
  'search_knowledge',
  'recall_turns',
  // Working memory (src/blocks/): offered when the turn has blocks.
  'block_append',
  'block_replace',
  'block_rewrite',
  'block_update_json',
  // Delegation (src/delegation/): offered when the agent has a cast.
  'delegate',
] as const;
export type BuiltInToolName = (typeof BUILT_IN_TOOLS)[number];

/** Tools that wait for a human unless an agent says otherwise: forgetting cannot be undone. */
export const DEFAULT_APPROVAL_TOOLS: readonly BuiltInToolName[] = ['delete_memory'];

export const AGENT_LIMITS = {
  nameMaxChars: 200,
  instructionsMaxChars: 20_000,
  modelMaxChars: 200,
  maxIterations: 50,
  toolTimeoutMs: { min: 100, max: 600_000 },
  toolResultChars: { min: 100, max: 1_000_000 },
  toolConsecutiveErrors: { min: 1, max: 20 },
  toolParallel: { min: 1, max: 16 },
  topKMax: 50,
  candidateKMax: 1000,
} as const;

// Settings are stored as jsonb, which refuses NUL and unpaired surrogates: a 400 here (`storable`), not a 500 there.

const toolName = z.enum(BUILT_IN_TOOLS);
const toolNames = z.array(toolName).max(BUILT_IN_TOOLS.length);

/**
 * What an agent sets; everything but `name` is optional, and an unset field keeps the
 * deployment's default. Strict, so a misspelt setting is a 400 rather than silently ignored.
 */
export const agentSettingsSchema = z.strictObject({
  name: storable(z.string().trim().min(1).max(AGENT_LIMITS.nameMaxChars)),
  instructions: storable(z.string().max(AGENT_LIMITS.instructionsMaxChars))
    .optional()
    .meta({ description: 'Added to the grounding rules, after them; they cannot lift the rule that sources and tool results are data.' }),
  model: storable(z.string().min(1).max(AGENT_LIMITS.modelMaxChars))
    .optional()
    .meta({ description: "The model's name; the deployment's LLM_MODEL when unset." }),
  provider: storable(z.string().min(1).max(100))
    .optional()
    .meta({ description: "A provider named in LLM_PROVIDERS (an OpenAI-compatible base URL and key); the deployment's LLM_BASE_URL when unset." }),
  temperature: z.number().min(0).max(2).optional(),
  sampling: samplingSchema.optional().meta({ description: "Sampling beside `temperature`; a `/v1/chat` request's own fields win." }),
  reasoning: reasoningSchema.optional().meta({ description: "The model's reasoning effort; a request's `reasoning` wins." }),
  truncation: truncationSchema.optional(),
  maxIterations: z.number().int().min(1).max(AGENT_LIMITS.maxIterations).optional().meta({ description: 'Model calls per turn at most.' }),
  budget: z
    .strictObject({
      maxTokens: z.number().int().min(1).optional(),
      maxUsd: z.number().positive().optional().meta({ description: 'Needs a price for the model in LLM_PRICES.' }),
    })
    .optional()
    .meta({ description: 'Per turn; a turn past it stops with stopReason `budget`.' }),
  tools: z
    .strictObject({
      allow: toolNames.optional().meta({ description: 'Only these built-in tools (all when unset).' }),
      deny: toolNames.optional().meta({ description: 'Never these; deny wins over allow.' }),
      timeoutMs: z
        .number()
        .int()
        .min(AGENT_LIMITS.toolTimeoutMs.min)
        .max(AGENT_LIMITS.toolTimeoutMs.max)
        .optional()
        .meta({ description: "A built-in tool call's time limit; past it the model is told the call timed out (default 30000)." }),
      maxResultChars: z
        .number()
        .int()
        .min(AGENT_LIMITS.toolResultChars.min)
        .max(AGENT_LIMITS.toolResultChars.max)
        .optional()
        .meta({ description: 'Characters of a tool result the model is sent at most; a note says how many more were cut (none when unset).' }),
      maxConsecutiveErrors: z
        .number()
        .int()
        .min(AGENT_LIMITS.toolConsecutiveErrors.min)
        .max(AGENT_LIMITS.toolConsecutiveErrors.max)
        .optional()
        .meta({ description: 'A tool failing this many times in a row is withdrawn for the rest of the turn, and the model told so (never when unset).' }),
      deferred: toolNames.optional().meta({ description: 'Built-in tools kept behind `tool_search`: the model finds them by searching.' }),
    })
    .optional(),
  toolCalls: z
    .strictObject({
      textFallback: z
        .enum(['auto', 'off'])
        .optional()
        .meta({ description: '`auto` (default): a reply that is only tool calls written as text (Hermes, Mistral, Llama, fenced JSON) runs them.' }),
      parallel: z
        .number()
        .int()
        .min(AGENT_LIMITS.toolParallel.min)
        .max(AGENT_LIMITS.toolParallel.max)
        .optional()
        .meta({ description: 'Tool calls of one reply run at once at most (default 4).' }),
    })
    .optional(),
  approval: z
    .strictObject({ tools: toolNames })
    .optional()
    .meta({ description: 'Built-in tools whose calls wait for a human decision (default `["delete_memory"]`).' }),
  recall: z
    .strictObject({
      memoryTopK: z.number().int().min(0).max(AGENT_LIMITS.topKMax).optional(),
      knowledgeTopK: z.number().int().min(0).max(AGENT_LIMITS.topKMax).optional(),
      turnTopK: z
        .number()
        .int()
        .min(0)
        .max(AGENT_LIMITS.topKMax)
        .optional()
        .meta({ description: "Past turns of the user's other conversations recalled per turn (default 3; 0: none)." }),
      candidateK: z.number().int().min(1).max(AGENT_LIMITS.candidateKMax).optional(),
      reranker: z.enum(RERANKERS).optional(),
      tagsAny: tagsSchema.optional(),
      tagsAll: tagsSchema.optional(),
      tagsNone: tagsSchema.optional(),
    })
    .optional()
    .meta({ description: "What a turn recalls before the model runs; a request's own `topK`, `candidateK` and tag filters win." }),
  compaction: z
    .strictObject({
      contextWindow: z.number().int().min(256).max(100_000_000).optional(),
      outputReserve: z.number().int().min(0).max(100_000_000).optional(),
    })
    .optional(),
  blocks: blockTemplatesSchema.optional(),
  cast: castSchema.optional(),
  delegation: delegationSchema.optional(),
  memoryExtraction: z
    .boolean()
    .optional()
    .meta({ description: "Facts extracted from each turn into memories (needs an LLM); the deployment's MEMORY_EXTRACTION when unset." }),
});

export type AgentSettings = z.output<typeof agentSettingsSchema>;

/** An agent as stored: its settings at its current version. The id is the `agentId` namespace. */
export interface Agent extends AgentSettings {
  id: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface AgentVersion {
  agentId: string;
  version: number;
  settings: AgentSettings;
  createdAt: Date;
}

/** An agent's settings alone, without what the store adds (id, version, times). */
export function settingsOf(agent: Agent): AgentSettings {
  const { id: _id, version: _version, createdAt: _createdAt, updatedAt: _updatedAt, ...settings } = agent;
  return settings;
}

/** The built-in tools an agent may use: allowed (all when unset) and not denied. */
export function permittedTools(settings: Pick<AgentSettings, 'tools'> | undefined): Set<BuiltInToolName> {
  const allow = settings?.tools?.allow;
  const deny = new Set(settings?.tools?.deny ?? []);
  return new Set(BUILT_IN_TOOLS.filter((name) => (allow === undefined || allow.includes(name)) && !deny.has(name)));
}

/** The tools whose calls wait for approval: the agent's list, or the default when it has none. */
export function approvalTools(settings: Pick<AgentSettings, 'approval'>): Set<string> {
  return new Set(settings.approval?.tools ?? DEFAULT_APPROVAL_TOOLS);
}
