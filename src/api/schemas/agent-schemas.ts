import { z } from 'zod';
import { agentSettingsSchema } from '../../agents/agent-config.js';
import type { AgentPatch } from '../../agents/agent-store.js';
import { agentIdSchema, queryInt } from './memory-schemas.js';

/** Every input limit of the agent routes, in one place. */
export const AGENT_ROUTE_LIMITS = {
  pageDefault: 20,
  pageMax: 200,
  cursorMaxChars: 512,
  // Versions are an int4 column.
  versionMax: 2_147_483_647,
} as const;

export const agentIdParams = z.strictObject({ id: agentIdSchema });

export const agentVersionParams = z.strictObject({ id: agentIdSchema, version: queryInt(1, AGENT_ROUTE_LIMITS.versionMax) });

const pageQuery = {
  limit: queryInt(1, AGENT_ROUTE_LIMITS.pageMax).default(AGENT_ROUTE_LIMITS.pageDefault),
  cursor: z.string().max(AGENT_ROUTE_LIMITS.cursorMaxChars).optional(),
};

export const listAgentsQuery = z.strictObject(pageQuery);

export const listAgentVersionsQuery = z.strictObject(pageQuery);

/** `POST /v1/agents`: the settings, and the id when the caller chooses it. */
export const createAgentBody = agentSettingsSchema
  .extend({
    id: agentIdSchema
      .optional()
      .meta({ description: "The `agentId` its memories and conversations are stored under (a new UUID when absent); an agent's id never changes." }),
  })
  .meta({ id: 'CreateAgentBody' });

const s = agentSettingsSchema.shape;
const clearable = 'null clears it: the deployment default applies again.';

/**
 * `PATCH /v1/agents/{id}`: only the fields given change, each replaced whole (a nested object
 * too); `null` clears one. `name` can be changed, not cleared.
 */
export const patchAgentBody = z
  .strictObject({
    name: s.name.optional(),
    instructions: s.instructions.nullable().meta({ description: `Added to the grounding rules; ${clearable}` }),
    model: s.model.nullable(),
    provider: s.provider.nullable(),
    temperature: s.temperature.nullable(),
    sampling: s.sampling.nullable(),
    reasoning: s.reasoning.nullable(),
    truncation: s.truncation.nullable(),
    maxIterations: s.maxIterations.nullable(),
    budget: s.budget.nullable(),
    tools: s.tools.nullable(),
    toolCalls: s.toolCalls.nullable(),
    approval: s.approval.nullable(),
    recall: s.recall.nullable(),
    compaction: s.compaction.nullable(),
    memoryExtraction: s.memoryExtraction.nullable(),
    blocks: s.blocks.nullable(),
    cast: s.cast.nullable(),
    delegation: s.delegation.nullable(),
  })
  .meta({ id: 'PatchAgentBody', description: `Only the fields given change, each replaced whole; ${clearable}` }) satisfies z.ZodType<AgentPatch>;
