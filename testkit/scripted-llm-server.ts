import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the client sent to /v1/chat/completions, parsed. */
export interface ScriptedRequest {
  headers: IncomingHttpHeaders;
  body: {
    model: string;
    messages: Array<Record<string, unknown> & { role: string }>;
    tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
    [key: string]: unknown;
  };
  /** True once the client hung up before the server finished its reply (aborts, timeouts). */
  closedEarly: boolean;
}

export interface ScriptedToolCall {
  id?: string;
  name: string;
  /** Sent verbatim, so tests can send malformed JSON. */
  arguments: string;
}

/**
 * One scripted reply. Whether it goes out as one JSON body or as SSE chunks follows the request's
 * `stream` flag, so the same script drives both `complete` and `stream`.
 */
export type ScriptedReply =
  | {
      kind: 'reply';
      content?: string | null;
      toolCalls?: ScriptedToolCall[];
      finishReason?: string;
      usage?: { prompt_tokens: number; completion_tokens: number };
      /** Sent as `prompt_tokens_details.cached_tokens` of the usage. */
      cachedTokens?: number;
      /** Sent as `completion_tokens_details.reasoning_tokens` of the usage. */
      reasoningTokens?: number;
      /** The model's reasoning, in the message's (and the stream deltas') `reasoning_content`, or `reasoningField`, sent before the content. */
      reasoning?: string;
      reasoningField?: 'reasoning_content' | 'reasoning';
      /** Wait before sending headers. */
      delayMs?: number;
      /** Wait for this to settle before sending headers: a reply held for as long as a test needs. */
      holdUntil?: Promise<unknown>;
      /** Streaming only: characters of content per chunk, and of tool arguments per chunk. */
      chunkSize?: number;
      /** Streaming only: pause between chunks (abort-mid-stream tests). */
      chunkDelayMs?: number;
    }
  | {
      kind: 'error';
      status: number;
      message?: string;
      code?: string;
      type?: string;
      headers?: Record<string, string>;
      delayMs?: number;
    };

export type Script = ScriptedReply[] | ((request: ScriptedRequest, index: number) => ScriptedReply);

export const reply = {
  text: (content: string, extra: Partial<Extract<ScriptedReply, { kind: 'reply' }>> = {}): ScriptedReply => ({
    kind: 'reply',
    content,
    ...extra,
  }),
  toolCalls: (toolCalls: ScriptedToolCall[], extra: Partial<Extract<ScriptedReply, { kind: 'reply' }>> = {}): ScriptedReply => ({
    kind: 'reply',
    content: null,
    toolCalls,
    finishReason: 'tool_calls',
    ...extra,
  }),
  empty: (): ScriptedReply => ({ kind: 'reply', content: '' }),
  error: (status: number, extra: Omit<Extract<ScriptedReply, { kind: 'error' }>, 'kind' | 'status'> = {}): ScriptedReply => ({
    kind: 'error',
    status,
    ...extra,
  }),
  rateLimited: (retryAfterSeconds: number): ScriptedReply => ({
    kind: 'error',
    status: 429,
    message: 'Rate limit reached',
    type: 'rate_limit_error',
    code: 'rate_limit_exceeded',
    headers: { 'retry-after': String(retryAfterSeconds) },
  }),
  contextOverflow: (): ScriptedReply => ({
    kind: 'error',
    status: 400,
    message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
    type: 'invalid_request_error',
    code: 'context_length_exceeded',
  }),
};

export interface ScriptedLlmServer {
  /** Base URL including /v1, as the OpenAI client expects. */
  url: string;
  requests: ScriptedRequest[];
  /** How many times `GET /v1/models` was asked. */
  readonly modelListRequests: number;
  close(): Promise<void>;
}

export interface ScriptedServerOptions {
  /** The ids `GET /v1/models` lists (default `test-model`). */
  models?: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A scripted OpenAI-compatible chat completions endpoint on 127.0.0.1. Each request consumes the
 * next scripted reply; running out of script answers 500 so an unexpected extra request fails loudly.
 */
export async function startScriptedLlmServer(script: Script, options: ScriptedServerOptions = {}): Promise<ScriptedLlmServer> {
  const requests: ScriptedRequest[] = [];
  let modelListRequests = 0;
  const queue = Array.isArray(script) ? [...script] : undefined;
  const sockets = new Set<import('node:net').Socket>();

  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        modelListRequests++;
        const data = (options.models ?? ['test-model']).map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'scripted' }));
        return sendJson(res, 200, { object: 'list', data });
      }
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        return sendJson(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
      }
      const recorded: ScriptedRequest = {
        headers: req.headers,
        body: JSON.parse(raw) as ScriptedRequest['body'],
        closedEarly: false,
      };
      const index = requests.length;
      requests.push(recorded);
      res.on('close', () => {
        if (!res.writableFinished) recorded.closedEarly = true;
      });
      const step = queue ? queue.shift() : (script as Exclude<Script, ScriptedReply[]>)(recorded, index);
      void respond(res, recorded, step).catch(() => res.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get modelListRequests() {
      return modelListRequests;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const socket of sockets) socket.destroy();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

async function respond(res: ServerResponse, request: ScriptedRequest, step: ScriptedReply | undefined): Promise<void> {
  if (!step) return sendJson(res, 500, { error: { message: 'scripted LLM server: script exhausted', type: 'server_error' } });
  if (step.delayMs) await sleep(step.delayMs);
  if (step.kind === 'reply' && step.holdUntil) await step.holdUntil.catch(() => undefined);
  if (res.destroyed) return;
  if (step.kind === 'error') {
    return sendJson(
      res,
      step.status,
      { error: { message: step.message ?? `scripted ${step.status}`, type: step.type ?? 'error', code: step.code ?? null, param: null } },
      step.headers,
    );
  }
  const model = request.body.model;
  const usage = step.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
  const toolCalls = (step.toolCalls ?? []).map((call, i) => ({ ...call, id: call.id ?? `call_${i}` }));
  const finishReason = step.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
  const usageBody = {
    ...usage,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    ...(step.cachedTokens !== undefined ? { prompt_tokens_details: { cached_tokens: step.cachedTokens } } : {}),
    ...(step.reasoningTokens !== undefined ? { completion_tokens_details: { reasoning_tokens: step.reasoningTokens } } : {}),
  };
  const reasoningField = step.reasoningField ?? 'reasoning_content';

  if (!request.body.stream) {
    return sendJson(res, 200, {
      id: 'chatcmpl-scripted',
      object: 'chat.completion',
      created: 0,
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: step.content ?? null,
            ...(step.reasoning !== undefined ? { [reasoningField]: step.reasoning } : {}),
            ...(toolCalls.length > 0
              ? {
                  tool_calls: toolCalls.map((c) => ({
                    id: c.id,
                    type: 'function',
                    function: { name: c.name, arguments: c.arguments },
                  })),
                }
              : {}),
          },
          finish_reason: finishReason,
        },
      ],
      usage: usageBody,
    });
  }

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const size = step.chunkSize ?? 4;
  const send = async (chunk: Record<string, unknown>) => {
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify({ id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 0, model, ...chunk })}\n\n`);
    if (step.chunkDelayMs) await sleep(step.chunkDelayMs);
  };
  const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  await send(choice({ role: 'assistant', content: '' }));
  const reasoning = step.reasoning ?? '';
  for (let i = 0; i < reasoning.length; i += size) await send(choice({ [reasoningField]: reasoning.slice(i, i + size) }));
  const content = step.content ?? '';
  for (let i = 0; i < content.length; i += size) await send(choice({ content: content.slice(i, i + size) }));
  for (const [index, call] of toolCalls.entries()) {
    // As OpenAI does: id and name arrive once, arguments arrive in fragments keyed by index.
    await send(choice({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (let i = 0; i < call.arguments.length; i += size) {
      await send(choice({ tool_calls: [{ index, function: { arguments: call.arguments.slice(i, i + size) } }] }));
    }
  }
  await send(choice({}, finishReason));
  if (request.body.stream_options?.include_usage) await send({ choices: [], usage: usageBody });
  if (!res.destroyed) res.end('data: [DONE]\n\n');
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(payload));
}
