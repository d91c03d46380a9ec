import { randomUUID } from 'node:crypto';
import { seededRandom } from '../../../../testkit/vector-fixtures.js';
import { MEMORIES, TURNS, DOCUMENTS } from './load-config.js';

// The clients' side: requests, generated bodies and the seeding of a fresh store.
export const random = seededRandom(42);
const WORDS = (
  'alice bob carol dave tea coffee green black oolong morning afternoon evening meeting project deadline budget ' +
  'report garden tomato rose basil travel paris tokyo lisbon train flight hotel birthday march april friend family ' +
  'doctor dentist appointment monday friday weekend concert piano guitar novel poetry recipe bread pasta curry ' +
  'running cycling swimming marathon invoice contract client server database index vector search memory agent ' +
  'prefers likes dislikes visited booked ordered wrote read played cooked planned cancelled moved started finished'
).split(' ');
const TAGS = WORDS.slice(0, 12);
export const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]!).join(' ');
const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function post(base: string, path: string, body: unknown): Promise<Response> {
  return fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
}

async function postOk(base: string, path: string, body: unknown): Promise<unknown> {
  const res = await post(base, path, body);
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function inParallel(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

export const memoryBody = (key: string) => ({ key, content: `${words(14)}.`, tags: [pick(TAGS)] });
export const memorySearchBody = () => ({ query: words(4), topK: 10, tagsAny: [pick(TAGS)] });

/** Through `/v1/memories/batch`, 100 a request, as a client loading its data would. */
export async function seedMemories(base: string): Promise<number> {
  const t0 = performance.now();
  await inParallel(Math.ceil(MEMORIES / 100), 2, async (b) => {
    const memories = Array.from({ length: Math.min(100, MEMORIES - b * 100) }, (_, i) => memoryBody(`seed-${b * 100 + i}`));
    await postOk(base, '/v1/memories/batch', { memories });
  });
  return performance.now() - t0;
}

export async function seedDocuments(base: string): Promise<void> {
  await inParallel(DOCUMENTS, 2, async (i) => {
    const sections = Array.from({ length: 4 }, () => `## ${words(3)}\n\n${Array.from({ length: 5 }, () => `${words(18)}.`).join(' ')}`);
    await postOk(base, '/v1/documents', { title: `Guide ${i}: ${words(3)}`, text: `# ${words(4)}\n\n${sections.join('\n\n')}`, format: 'markdown' });
  });
}

/** 20 turns a conversation, a user per 10 conversations, as `/v1/conversations/import` takes them. */
export async function seedTurns(base: string): Promise<number> {
  const perConversation = 20;
  const conversations = Math.ceil(TURNS / perConversation);
  const t0 = performance.now();
  await inParallel(conversations, 2, async (c) => {
    const start = Date.UTC(2025, 0, 1) + c * 86_400_000;
    const at = (m: number) => new Date(start + m * 60_000).toISOString();
    const messages = Array.from({ length: perConversation }, (_, t) => [
      { seq: t * 2 + 1, turn: t + 1, role: 'user', content: `${words(12)}?`, createdAt: at(t * 2) },
      { seq: t * 2 + 2, turn: t + 1, role: 'assistant', content: `${words(20)}.`, createdAt: at(t * 2 + 1) },
    ]).flat();
    await postOk(base, `/v1/conversations/import?userId=user-${Math.floor(c / 10)}`, {
      format: 'memrag.conversation',
      version: 1,
      conversation: { id: randomUUID(), agentId: 'default', title: words(4), createdAt: at(0), updatedAt: at(40) },
      messages,
    });
  });
  return performance.now() - t0;
}
