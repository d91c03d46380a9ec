import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: { model: string; input: string[]; dimensions?: number; encoding_format?: string };
}

export interface FakeEmbeddingsServer {
  /** Base URL including /v1, as the OpenAI client expects. */
  baseURL: string;
  requests: RecordedRequest[];
  /** Make the next responses fail with this status (consumed one per request). */
  failNext(status: number, times?: number): void;
  /** Behave like compatible servers that do not support the `dimensions` parameter. */
  ignoreDimensions: boolean;
  /** Rewrites the `data` array of the next successful responses, for malformed-answer tests. */
  tamper?: (data: EmbeddingItem[]) => EmbeddingItem[];
  /** Answers this long after a request arrives, as a model's time per batch would. */
  delayMs: number;
  close(): Promise<void>;
}

export interface EmbeddingItem {
  object: 'embedding';
  index: number;
  embedding: number[];
}

export const FAKE_DEFAULT_DIMENSIONS = 6;

/** The vector the server gives a text: derived from the text alone, deliberately not unit length. */
export function fakeVector(text: string, dimensions: number): number[] {
  const seed = [...text].reduce((s, c) => (s * 31 + c.charCodeAt(0)) % 1_000_003, 7);
  return Array.from({ length: dimensions }, (_, i) => 3 * Math.cos(seed + i * 1.7));
}

/**
 * A minimal OpenAI-compatible `/v1/embeddings` endpoint on 127.0.0.1. It answers in reverse
 * order (clients must sort by `index`) and honours `dimensions`.
 */
export async function startFakeEmbeddingsServer(): Promise<FakeEmbeddingsServer> {
  const requests: RecordedRequest[] = [];
  let failures: number[] = [];
  let fake: FakeEmbeddingsServer;
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const reply = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return reply(404, { error: { message: 'not found' } });
      const body = JSON.parse(raw) as RecordedRequest['body'];
      requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      const status = failures.shift();
      if (status) return reply(status, { error: { message: `scripted ${status}`, type: 'invalid_request_error' } });
      if (body.input.some((t) => t.length === 0)) return reply(400, { error: { message: "'$.input' is invalid" } });
      const dimensions = (fake.ignoreDimensions ? undefined : body.dimensions) ?? FAKE_DEFAULT_DIMENSIONS;
      const data = body.input.map((text, index): EmbeddingItem => ({ object: 'embedding', index, embedding: fakeVector(text, dimensions) }));
      const answered = (fake.tamper ?? ((d) => d))(data.reverse());
      const answer = () => reply(200, { object: 'list', model: body.model, data: answered, usage: { prompt_tokens: 1, total_tokens: 1 } });
      if (fake.delayMs > 0) setTimeout(answer, fake.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake = {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    ignoreDimensions: false,
    delayMs: 0,
    failNext(status, times = 1) {
      failures = [...failures, ...Array<number>(times).fill(status)];
    },
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
  return fake;
}
