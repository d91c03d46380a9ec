import { randomUUID } from 'node:crypto';
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import type { Agent } from '../../agents/agent-config.js';
import type { ChatListener, TurnReply } from '../../chat/chat-service.js';
import { DEFAULT_AGENT_ID } from '../../memory/memory-types.js';
import { RunConflictError } from '../../runs/run-types.js';
import type { ApiEnv } from '../api-env.js';
import { HttpError, validationError } from '../../api/errors.js';
import { completionOf, replyMessage } from '../openai-compatible/completion-reply.js';
import { streamCompletion } from '../openai-compatible/completion-stream.js';
import { checkCompletionImages, readCompletionTurn } from '../openai-compatible/completion-turn.js';
import { threadKey } from '../openai-compatible/thread-key.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { errorResponse, jsonBody, jsonReply } from '../openapi/route-responses.js';
import { agentIdSchema, userIdSchema } from '../../api/schemas/memory-schemas.js';
import {
  IGNORED_COMPLETION_PARAMETERS,
  completionChunkSchema,
  completionReplySchema,
  completionRequestSchema,
  modelListSchema,
  modelSchema,
} from '../../api/schemas/openai-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseBody, parseWith } from '../validate.js';
import { completionSamplingOf } from '../openai-compatible/completion-sampling.js';

/** `model` for the default agent; `memrag:<agentId>` names another. */
const MODEL_PREFIX = 'memrag';
const USER_HEADER = 'X-Memrag-User-Id';
const CONVERSATION_HEADER = 'X-Memrag-Conversation-Id';
const MODELS_LISTED_MAX = 1000;

const modelParams = z.strictObject({ model: z.string().min(1).max(300) });

/** A request header checked by `schema`: a 400 naming the header when it does not pass; undefined when absent. */
function headerOf<S extends z.ZodType>(c: Context, name: string, schema: S): z.output<S> | undefined {
  const value = c.req.header(name);
  if (!value) return undefined;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationError([{ path: name, message: parsed.error.issues[0]!.message }], 'header');
  return parsed.data;
}

/**
 * OpenAI's `POST /v1/chat/completions` and `GET /v1/models` over memrag's chat: the client keeps
 * the thread, memrag adds what it remembers (memories, past turns, documents, cited) and keeps the
 * turn for later recall and extraction. Errors are in OpenAI's shape (openai-compatible/openai-error.ts).
 */
export function createOpenAiCompatibleRoutes(ctx: AppContext): ApiRoutes {
  const routes = createApiRoutes();
  const started = Math.floor(Date.now() / 1000);

  /** The agent a `model` names, with its record (null: the default agent without one); a 404 in OpenAI's terms when it names none of the tenant's. */
  async function agentOf(c: Context<ApiEnv>, model: string): Promise<{ agentId: string; agent: Agent | null }> {
    const named = model === MODEL_PREFIX ? DEFAULT_AGENT_ID : model.startsWith(`${MODEL_PREFIX}:`) ? model.slice(MODEL_PREFIX.length + 1) : undefined;
    if (named !== undefined && agentIdSchema.safeParse(named).success) {
      const agent = await ctx.agents.forTenant(tenantOf(c)).get(named);
      if (agent || named === DEFAULT_AGENT_ID) return { agentId: named, agent };
    }
    throw new HttpError(
      404,
      'model_not_found',
      `The model ${JSON.stringify(model)} does not exist: this server serves "memrag" and "memrag:<agentId>" for its agents (GET /v1/models)`,
    );
  }

  const completionsRoute = createRoute({
    method: 'post',
    path: '/chat/completions',
    operationId: 'createChatCompletion',
    tags: [TAGS.openAi],
    summary: "OpenAI's chat completion, answered by an agent with memory",
    description:
      'The last user message is the question; earlier messages are the history the client keeps (sent to the model compacted to ' +
      'its window, not stored again); system messages are the instructions for this turn. `model` names the agent (`memrag` or ' +
      '`memrag:<agentId>`), `user` (or the `X-Memrag-User-Id` header) the user whose memories and past turns are recalled. The ' +
      'turn is stored in the conversation its messages continue (or the one `X-Memrag-Conversation-Id` names) for episodic recall ' +
      'and fact extraction. `tools` are client tools: a call comes back as `tool_calls` and the next request carries the results. ' +
      "`memrag: {citations, runId, conversationId}` rides beside OpenAI's fields. Streams `chat.completion.chunk` frames and " +
      `\`[DONE]\` with \`stream: true\`. The sampling parameters (\`temperature\`, \`top_p\`, \`max_tokens\`, \`max_completion_tokens\`, \`stop\`, ` +
      `\`seed\`, \`presence_penalty\`, \`frequency_penalty\`) and \`reasoning_effort\` reach the agent's model over its own settings. ` +
      "With `include_reasoning: true` or `reasoning_effort` given, the model's reasoning comes as the message's `reasoning_content` " +
      '(`delta.reasoning_content` when streamed), never in `content`. ' +
      `Parameters memrag does not use are accepted and ignored: ${IGNORED_COMPLETION_PARAMETERS.map((p) => `\`${p}\``).join(', ')}.`,
    request: { body: jsonBody(completionRequestSchema) },
    responses: {
      200: {
        description: 'A `chat.completion`, or with `stream: true` Server-Sent Events of `chat.completion.chunk` ending with `data: [DONE]`.',
        content: { 'application/json': { schema: completionReplySchema }, 'text/event-stream': { schema: completionChunkSchema } },
      },
      404: errorResponse({
        codes: ['model_not_found', 'not_found'],
        description: "No agent by that model name, or the conversation named by header is another agent's or user's.",
      }),
      409: errorResponse({
        codes: ['run_not_waiting', 'run_expired', 'run_waiting'],
        description: 'Tool results that answer no waiting call, or a thread whose run waits for its tool results.',
      }),
      422: errorResponse({
        codes: ['context_overflow', 'content_filtered'],
        description: "The message and its sources exceed the model's window, or the provider's content filter refused.",
      }),
      502: errorResponse({ codes: ['llm_auth_error', 'llm_error'], description: "The provider rejected the server's key, or the request." }),
      503: errorResponse({ codes: ['llm_unavailable'], description: 'The provider failed (5xx, connection).' }),
      504: errorResponse({ codes: ['llm_timeout'], description: 'No answer from the provider within LLM_TIMEOUT_MS.' }),
    },
  });
  defineRoute(routes, completionsRoute, async (c) => {
    const body = await parseBody(c, completionRequestSchema);
    const tenantId = tenantOf(c);
    const { agentId, agent } = await agentOf(c, body.model);
    const userId = body.user ?? headerOf(c, USER_HEADER, userIdSchema) ?? null;
    checkCompletionImages(body.messages, { maxBytes: ctx.config.IMAGE_MAX_BYTES, maxPerMessage: ctx.config.IMAGE_MAX_PER_MESSAGE });
    const turn = readCompletionTurn(body.messages);
    // Asked for by name (OpenRouter's flag), or by asking for an effort: a plain OpenAI client gets none.
    const includeReasoning = body.include_reasoning === true || body.reasoning_effort != null;
    const chat = ctx.chat.forTenant(tenantId);
    const runs = ctx.runs.forTenant(tenantId);
    const conversationId =
      headerOf(c, CONVERSATION_HEADER, z.uuid()) ??
      (turn.before.length > 0 ? await runs.conversationOfThread(threadKey(agentId, userId, turn.before), agentId, userId) : null) ??
      undefined;

    let run: (listener: ChatListener) => Promise<TurnReply>;
    if (turn.toolOutputs) {
      const runId = conversationId ? await runs.waitingIn(conversationId) : null;
      // Another agent's or user's run (a conversation named by header) is refused as none would be.
      const waiting = runId ? await runs.get(runId) : null;
      if (!runId || waiting?.agentId !== agentId || waiting.userId !== userId)
        throw new RunConflictError(
          'run_not_waiting',
          'No turn of this thread waits for these tool results: they answer no call this server made, or the run expired',
        );
      run = await chat.beginResume({ runId, toolOutputs: turn.toolOutputs });
    } else {
      await chat.assertCanContinue(conversationId, agentId, userId ?? undefined);
      const request = {
        message: turn.question!,
        ...(turn.questionImages ? { images: turn.questionImages } : {}),
        agentId,
        agent,
        ...(userId !== null ? { userId } : {}),
        ...(conversationId ? { conversationId } : {}),
        history: turn.history,
        ...(turn.instructions !== undefined ? { instructions: turn.instructions } : {}),
        ...(body.tools ? { clientTools: body.tools } : {}),
        ...completionSamplingOf(body),
        ...(includeReasoning ? { includeReasoning } : {}),
      };
      run = (listener) => chat.chat({ ...request, ...listener });
    }

    // The client will send these messages back, and its new turn after them: the key, stored with
    // the run's end, finds this conversation then. A turn waiting for a person has no reply to hold.
    const threadKeyOf = (reply: TurnReply, streamedText?: string) =>
      reply.status === 'requires_approval' ? undefined : threadKey(agentId, userId, [...turn.sent, replyMessage(reply, streamedText)]);
    const identity = { id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model: body.model };
    if (body.stream !== true) {
      const reply = await run({ stream: false, signal: c.req.raw.signal, threadKeyOf });
      c.header(CONVERSATION_HEADER, reply.conversationId);
      return c.json(completionOf(reply, identity, { includeReasoning }));
    }
    return streamCompletion(c, ctx.logger, { identity, includeUsage: body.stream_options?.include_usage === true, includeReasoning, threadKeyOf }, run);
  });

  const modelsRoute = createRoute({
    method: 'get',
    path: '/models',
    operationId: 'listModels',
    tags: [TAGS.openAi],
    summary: 'The agents, as OpenAI models',
    description: `\`memrag\` (the default agent) and \`memrag:<agentId>\` for each agent of the tenant (at most ${MODELS_LISTED_MAX}).`,
    responses: { 200: jsonReply('The models.', modelListSchema) },
  });
  defineRoute(routes, modelsRoute, async (c) => {
    const agents = ctx.agents.forTenant(tenantOf(c));
    const data = [{ id: MODEL_PREFIX, object: 'model' as const, created: started, owned_by: 'memrag' }];
    let cursor: string | undefined;
    do {
      const page = await agents.list({ limit: 100, ...(cursor ? { cursor } : {}) });
      for (const agent of page.items) {
        if (data.length > MODELS_LISTED_MAX) break;
        data.push({ id: `${MODEL_PREFIX}:${agent.id}`, object: 'model', created: Math.floor(agent.createdAt.getTime() / 1000), owned_by: 'memrag' });
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor && data.length <= MODELS_LISTED_MAX);
    return c.json({ object: 'list' as const, data });
  });

  const modelRoute = createRoute({
    method: 'get',
    path: '/models/{model}',
    operationId: 'retrieveModel',
    tags: [TAGS.openAi],
    summary: 'One agent, as an OpenAI model',
    request: { params: modelParams },
    responses: { 200: jsonReply('The model.', modelSchema), 404: errorResponse({ codes: ['model_not_found'], description: 'No agent by that model name.' }) },
  });
  defineRoute(routes, modelRoute, async (c) => {
    const { model } = parseWith(modelParams, c.req.param(), 'path');
    const { agent } = await agentOf(c, model);
    return c.json({ id: model, object: 'model' as const, created: agent ? Math.floor(agent.createdAt.getTime() / 1000) : started, owned_by: 'memrag' });
  });

  return routes;
}
