import { z } from 'zod';
import { agentSettingsSchema } from '../../agents/agent-config.js';

/** What the agent routes answer. Dates travel as ISO 8601 strings (JSON has no dates). */

const versionSchema = z.number().int().min(1).meta({ description: 'Numbered 1, 2, 3…: each change of the settings is a new version.' });

// A plain object, open to settings added later; a field left out is unset (the deployment's default).
const settingsFields = agentSettingsSchema.shape;

export const agentSettingsReplySchema = z.object(settingsFields).meta({ id: 'AgentSettings' });

export const agentSchema = z
  .object({
    id: z.string(),
    version: versionSchema,
    ...settingsFields,
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime().meta({ description: 'When the latest version was written.' }),
  })
  .meta({ id: 'Agent', description: 'An agent: its settings at its current version.' });

export const agentVersionSchema = z
  .object({ agentId: z.string(), version: versionSchema, settings: agentSettingsReplySchema, createdAt: z.iso.datetime() })
  .meta({ id: 'AgentVersion', description: 'The settings of one version, as written then.' });

const nextCursor = z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last one.' });

export const agentPageSchema = z.object({ items: z.array(agentSchema), nextCursor }).meta({ id: 'AgentPage' });

export const agentVersionPageSchema = z.object({ items: z.array(agentVersionSchema), nextCursor }).meta({ id: 'AgentVersionPage' });
