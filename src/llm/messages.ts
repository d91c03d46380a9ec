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
/**
 * An image beside a message's text (OpenAI's `image_url` part). `content` stays the text alone:
 * recall, indexing and extraction read it, never the image.
 */
export interface ImagePart {
  /** What the model is sent: an https URL or a data URL; absent on a stored image not loaded for this request. */
  url?: string;
  detail?: 'auto' | 'low' | 'high';
  /** The conversation's stored copy of a data URL's image; https URLs are kept as references only. */
  attachmentId?: string;
  mediaType?: string;
  sha256?: string;
}

export type UserMessage = { role: 'user'; content: string; images?: ImagePart[] };
export type AssistantMessage = { role: 'assistant'; content: string | null; toolCalls: ToolCall[] };
/** `images`: what a client tool returned beside its text (sent to the model in a user message after the results). */
export type ToolMessage = { role: 'tool'; toolCallId: string; content: string; isError?: boolean; images?: ImagePart[] };

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens the provider served from its prefix cache (part of `promptTokens`); absent when it reported none. */
  cachedTokens?: number;
  /** Completion tokens spent reasoning (part of `completionTokens`); absent when it reported none. */
  reasoningTokens?: number;
}

/** What the provider needs to advertise a tool: JSON Schema, not zod. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}
