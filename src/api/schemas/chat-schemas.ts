import { z } from 'zod';
import { TOOL_SEARCH_NAME } from '../../llm/tool-search.js';
import { BUILT_IN_TOOLS } from '../../agents/agent-config.js';
import { reasoningSchema, samplingSchema } from '../../agents/model-settings.js';
import { storable, unstorableIn } from '../../text/storable-string.js';
import { parametersProblem } from '../../runs/client-tools.js';
import { type ImageLimits, IMAGE_LIMITS_DEFAULT, contentPartsSchema } from './content-parts-schemas.js';
import { DOCUMENT_LIMITS } from './document-schemas.js';
import { agentIdSchema, tagsSchema, userIdSchema } from './memory-schemas.js';

export const CHAT_LIMITS = {
  messageMaxChars: 32_000,
  instructionsMaxChars: 20_000,
} as const;

const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const messageSchema = z
  .string()
  .min(1)
  .max(CHAT_LIMITS.messageMaxChars)
  .refine((s) => s.trim() !== '', 'must not be blank')
  // NUL is refused because the message may be saved as a memory, and Postgres text cannot hold it.
  .refine((s) => !s.includes('\u0000'), 'must not contain NUL (\\u0000) characters')
  .refine((s) => !LONE_SURROGATE.test(s), 'must not contain unpaired UTF-16 surrogates');

const CLIENT_TOOLS_MAX = 128;

/** A tool the client runs, in OpenAI's function tool shape. */
export const clientToolSchema = z
  .strictObject({
    type: z.literal('function'),
    function: z.strictObject({
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, "_" or "-"'),
      // Stored with a paused run (jsonb): what it cannot hold is refused here, not when the run pauses.
      description: storable(z.string().max(4000)).optional(),
      parameters: z
        .record(z.string(), z.unknown())
        .optional()
        .superRefine((parameters, ctx) => {
          if (parameters === undefined) return;
          const unstorable = unstorableIn(parameters);
          if (unstorable) return void ctx.addIssue({ code: 'custom', path: unstorable.path, message: unstorable.message });
          const problem = parametersProblem(parameters);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .meta({ description: "A JSON Schema (draft 2020-12) of type `object` for the arguments; the model's arguments are checked against it." }),
      // OpenAI's structured-output flag: accepted so that OpenAI tool lists can be sent as they are.
      strict: z.boolean().optional(),
    }),
    deferred: z
      .boolean()
      .optional()
      .meta({ description: 'Kept behind `tool_search` whatever the number of tools: the model is shown it once a search finds it.' }),
  })
  .meta({ id: 'ClientTool' });

const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([...BUILT_IN_TOOLS, TOOL_SEARCH_NAME]);

export const clientToolsSchema = z
  .array(clientToolSchema)
  .max(CLIENT_TOOLS_MAX)
  .superRefine((tools, ctx) => {
    const seen = new Set<string>();
    tools.forEach((tool, i) => {
      const { name } = tool.function;
      if (RESERVED_TOOL_NAMES.has(name))
        ctx.addIssue({ code: 'custom', path: [i, 'function', 'name'], message: `${JSON.stringify(name)} is a built-in tool's name` });
      else if (seen.has(name)) ctx.addIssue({ code: 'custom', path: [i, 'function', 'name'], message: `${JSON.stringify(name)} is declared twice` });
      seen.add(name);
    });
  });

/** `POST /v1/chat`; strict, so a misspelt filter is a 400 rather than an unfiltered answer. */
/** `POST /v1/chat`'s message: text, or content parts with images (the MCP tool takes text only). */
export function chatMessageSchema(imageLimits: ImageLimits = IMAGE_LIMITS_DEFAULT) {
  return z.union([messageSchema, contentPartsSchema(imageLimits, messageSchema)]).meta({
    description:
      'The message: text, or OpenAI content parts (text and images). The text parts are what recall, the stored turn and memory ' +
      'extraction read; the images reach the model and the conversation keeps them (`GET /v1/conversations/{id}/attachments/{attachmentId}`).',
  });
}

export function chatBody(maxTopK: number) {
  return z.strictObject({
    message: messageSchema,
    conversationId: z.uuid().optional(),
    agentId: agentIdSchema.optional(),
    userId: userIdSchema.optional().meta({
      description:
        "The user the turn is with: memories are recalled from theirs and the agent's shared ones, the memory tools write theirs, " +
        'past turns come from their other conversations. A conversation keeps the user of its first turn: continuing it with ' +
        'another (or none) is a 404. Absent: no user; only the shared memories and past turns of conversations with no user are ' +
        'recalled, and the memory tools write shared memories.',
    }),
    tagsAny: tagsSchema.optional(),
    tagsAll: tagsSchema.optional(),
    tagsNone: tagsSchema.optional(),
    topK: z.number().int().min(1).max(maxTopK).optional(),
    candidateK: z.number().int().min(1).max(DOCUMENT_LIMITS.candidateKMax).optional(),
    stream: z.boolean().optional(),
    tools: clientToolsSchema.optional().meta({
      description:
        "Tools the client runs (OpenAI's function tools). When the model calls one, the turn pauses: the reply is " +
        '`status: "requires_action"` with the calls, answered by `POST /v1/runs/{runId}/tool-outputs`.',
    }),
    instructions: storable(z.string().min(1).max(CHAT_LIMITS.instructionsMaxChars))
      .optional()
      .meta({ description: "This turn's own instructions: added to the system prompt after the agent's, for this turn only." }),
    sampling: samplingSchema.optional().meta({ description: "Sampling for this turn's model calls; each field given wins over the agent's." }),
    reasoning: reasoningSchema.optional().meta({ description: "The model's reasoning effort for this turn (over the agent's)." }),
    includeReasoning: z.boolean().optional().meta({
      description: "The reply carries the model's reasoning as `reasoning` (streams send it as `thinking` events whatever this says).",
    }),
  });
}

export type ChatBody = z.output<ReturnType<typeof chatBody>>;
