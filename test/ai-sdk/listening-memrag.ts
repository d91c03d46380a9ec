import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { simulateReadableStream } from 'ai';
import type { MockLanguageModelV3 } from 'ai/test';
import type { AppContext } from '../../src/app-context.js';
import { createApp, createTestContext } from '../http/http-test-context.js';

/** A memrag listening on a port of 127.0.0.1 (no LLM: extraction off), over an in-memory PGlite. */
export interface ListeningMemrag {
  ctx: AppContext;
  url: string;
  /** A JSON request to it; the reply's status and parsed body. */
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startListeningMemrag(env: Record<string, string> = {}): Promise<ListeningMemrag> {
  const ctx = await createTestContext(env);
  const app = createApp({ ...ctx, llm: undefined });
  let server: ServerType | undefined;
  const url = await new Promise<string>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
  });
  return {
    ctx,
    url,
    async request(method, path, body) {
      const res = await fetch(`${url}${path}`, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    async close() {
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      await ctx.backgroundTasks.whenIdle();
      await ctx.close();
    },
  };
}

/** An origin nothing listens on: a server started and closed again, its port left free. */
export async function deadOrigin(): Promise<string> {
  let server: ServerType | undefined;
  const url = await new Promise<string>((resolve) => {
    server = serve({ fetch: () => new Response('gone'), port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
  });
  await new Promise<void>((resolve) => server!.close(() => resolve()));
  return url;
}

// The mock model's shapes (ai/test's MockLanguageModelV3), read off it.
export type CallOptions = Parameters<MockLanguageModelV3['doGenerate']>[0];
export type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
export type StreamResult = Awaited<ReturnType<MockLanguageModelV3['doStream']>>;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A generate result: the model's text. */
export function textResult(text: string): GenerateResult {
  return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
}

/** A generate result: the model calls one tool. */
export function toolCallResult(toolName: string, input: unknown, toolCallId = `call-${toolName}`): GenerateResult {
  return {
    content: [{ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

/** A stream result: the model's text in a few deltas. */
export function textStreamResult(deltas: string[]): StreamResult {
  return {
    stream: simulateReadableStream({
      chunks: [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't1' },
        ...deltas.map((delta) => ({ type: 'text-delta' as const, id: 't1', delta })),
        { type: 'text-end', id: 't1' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
      ],
    }),
  };
}

/** The text of a prompt's messages of a role, joined (tool results as their JSON). */
export function promptText(prompt: CallOptions['prompt'], role: 'system' | 'user' | 'assistant' | 'tool'): string {
  return prompt
    .filter((m) => m.role === role)
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : m.content.map((part) => ('text' in part ? part.text : 'output' in part ? JSON.stringify(part.output) : '')).join('\n'),
    )
    .join('\n');
}
