import { SpanStatusCode } from '@opentelemetry/api';
import { withSpan } from '../util/spans.js';
import type { AgentEvent, AgentHooks, ToolResult } from './agent-types.js';
import { GEN_AI_OPERATION, GEN_AI_OPERATION_NAME, GEN_AI_TOOL_CALL_ID, GEN_AI_TOOL_NAME, GEN_AI_TOOL_TYPE } from './gen-ai-attributes.js';
import type { ToolCall, ToolMessage } from './messages.js';
import { parseToolArguments } from './tool-arguments.js';
import { limitToolResult } from './tool-result-limit.js';
import { type Tool, validateToolArgs } from './tool.js';

/** A result as the history carries it: a tool message answering the call. */
export function toolMessage(call: ToolCall, result: Omit<ToolResult, 'durationMs'> & Partial<ToolResult>): ToolMessage {
  return { role: 'tool', toolCallId: call.id, content: result.content, ...(result.isError ? { isError: true } : {}) };
}

/** What a run of one tool call needs from its turn. */
export interface ToolRunContext {
  // biome-ignore lint/suspicious/noExplicitAny: tools are heterogeneous in their argument types (as AgentTurnOptions' `tools`).
  toolsByName: Map<string, Tool<any>>;
  toolTimeoutMs: number;
  /** Characters of a result the model is sent at most (none when undefined). */
  maxResultChars?: number | undefined;
  signal: AbortSignal | undefined;
  hooks: AgentHooks[];
  onEvent: ((event: AgentEvent) => void) | undefined;
  iteration: number;
}

/** One call of one of the loop's own tools, in an `execute_tool <name>` span (what the tool does nests under it). */
export function runTool(call: ToolCall, ctx: ToolRunContext): Promise<ToolResult> {
  const attributes = {
    [GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION.executeTool,
    [GEN_AI_TOOL_NAME]: call.name,
    [GEN_AI_TOOL_CALL_ID]: call.id,
    [GEN_AI_TOOL_TYPE]: 'function',
  };
  return withSpan(`${GEN_AI_OPERATION.executeTool} ${call.name}`, attributes, async (span) => {
    const started = Date.now();
    ctx.onEvent?.({ type: 'tool_start', call, iteration: ctx.iteration });
    for (const hook of ctx.hooks) await hook.beforeTool?.(call);
    const outcome = await executeTool(call, ctx);
    const result: ToolResult = { ...outcome, content: limitToolResult(outcome.content, ctx.maxResultChars), durationMs: Date.now() - started };
    // A failed call is a result the model reads, not a throw: the span says it failed all the same.
    if (result.isError) {
      span.setAttribute('error.type', 'tool_error');
      // Not the result's text: it may quote the model's arguments, and spans carry no content.
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'tool_error' });
    }
    for (const hook of ctx.hooks) await hook.afterTool?.(call, result);
    ctx.onEvent?.({ type: 'tool_end', call, result, iteration: ctx.iteration });
    return result;
  });
}

/** Every failure becomes a result the model can read and react to; only an abort escapes. */
async function executeTool(call: ToolCall, ctx: ToolRunContext): Promise<Omit<ToolResult, 'durationMs'>> {
  const fail = (content: string) => ({ content: `Error: ${content}`, isError: true });
  const tool = ctx.toolsByName.get(call.name);
  if (!tool) {
    const names = [...ctx.toolsByName.keys()].join(', ') || 'none';
    return fail(`unknown tool '${call.name}'. Available tools: ${names}`);
  }
  const parsed = parseToolArguments(call.arguments);
  if (!parsed.ok) return fail(parsed.error);
  const args = validateToolArgs(tool, parsed.value);
  if (!args.ok) return fail(args.error);

  const controller = new AbortController();
  const onAbort = () => controller.abort(ctx.signal?.reason);
  if (ctx.signal?.aborted) onAbort();
  ctx.signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ctx.toolTimeoutMs);
  });
  const aborted = new Promise<'aborted'>((resolve) => {
    if (controller.signal.aborted) resolve('aborted');
    controller.signal.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  try {
    const run = Promise.resolve().then(() => tool.execute(args.value, { signal: controller.signal, toolCallId: call.id }));
    // A tool that ignores its signal must not hold the turn hostage, so we race rather than await.
    const outcome = await Promise.race([run.then((value) => ({ value })), timedOut, aborted]);
    if (outcome === 'timeout') {
      controller.abort(new Error('tool timed out'));
      return fail(`tool '${call.name}' timed out after ${ctx.toolTimeoutMs} ms`);
    }
    if (outcome === 'aborted') return fail(`tool '${call.name}' was aborted`);
    const value = outcome.value;
    return { content: typeof value === 'string' ? value : (JSON.stringify(value) ?? ''), isError: false };
  } catch (e) {
    return fail(`tool '${call.name}' failed: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    clearTimeout(timer);
    ctx.signal?.removeEventListener('abort', onAbort);
  }
}
