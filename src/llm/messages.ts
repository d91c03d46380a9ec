/**
 * The agent's own message shape. It is provider-neutral on purpose: the loop, hooks and stored
 * history never depend on the OpenAI wire format, which only `llm-provider.ts` knows.
 */
export interface ToolCall {
  id: string;
  name: string;
  /** Raw JSON text as the model produced it; parsed (and repaired) only when the tool runs. */
  arguments: string;
}

export type SystemMessage = { role: 'system'; content: string };
export type UserMessage = { role: 'user'; content: string };
export type AssistantMessage = { role: 'assistant'; content: string | null; toolCalls: ToolCall[] };
export type ToolMessage = { role: 'tool'; toolCallId: string; content: string; isError?: boolean };

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

/** What the provider needs to advertise a tool: JSON Schema, not zod. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}
