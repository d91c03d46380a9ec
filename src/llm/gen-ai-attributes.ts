/**
 * Span attribute names of OpenTelemetry's GenAI semantic conventions, for the spans of model
 * calls (observability/instrumented-llm.ts), tool calls and agent turns (agent-loop.ts). Kept
 * here rather than imported from `@opentelemetry/semantic-conventions`, whose GenAI names are
 * still "incubating" (not stable across its releases); these are the names backends read.
 */
export const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
/** Deprecated in favour of `gen_ai.provider.name`, still what several backends read: both are set. */
export const GEN_AI_SYSTEM = 'gen_ai.system';
export const GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
export const GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';

/** Values of `gen_ai.operation.name`. */
export const GEN_AI_OPERATION = { chat: 'chat', executeTool: 'execute_tool', invokeAgent: 'invoke_agent' } as const;

/** What memrag adds to a model call's or a turn's span: its cost in USD (when the model has a price). */
export const MEMRAG_COST_USD = 'memrag.cost_usd';
