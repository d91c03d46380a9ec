// Wrap a model so that it recalls memrag's memories of the user and stores each finished turn.
// Run against a started server: MEMRAG_URL=http://127.0.0.1:3000 [MEMRAG_API_KEY=…] npx tsx examples/ai-sdk-middleware.ts
// The model is any OpenAI-compatible one: OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL (e.g.
// http://127.0.0.1:11434/v1 and llama3.1:8b for Ollama). Unset, it is memrag's own `/v1` (model `memrag`).
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { streamText, wrapLanguageModel } from 'ai';
import { memragMemoryMiddleware } from 'memrag/ai-sdk';

const memragUrl = process.env.MEMRAG_URL ?? 'http://127.0.0.1:3000';

const middleware = memragMemoryMiddleware({
  baseUrl: memragUrl,
  apiKey: process.env.MEMRAG_API_KEY,
  userId: 'ada',
  // Failures never fail the generation; this is where they show.
  onError: (error, during) => console.warn(`memrag ${during} failed:`, error),
});

// Any AI SDK model (a provider package's) is wrapped the same way.
// This one is memrag's own `/v1` unless OPENAI_BASE_URL names another server; memrag's key goes to memrag only.
const ownModel = !process.env.OPENAI_BASE_URL;
if (!ownModel && !process.env.OPENAI_MODEL) throw new Error('OPENAI_BASE_URL is set: set OPENAI_MODEL too');
const provider = createOpenAICompatible({
  name: 'llm',
  baseURL: process.env.OPENAI_BASE_URL ?? `${memragUrl}/v1`,
  apiKey: ownModel ? process.env.MEMRAG_API_KEY : process.env.OPENAI_API_KEY,
});
const model = wrapLanguageModel({ model: provider(ownModel ? 'memrag' : process.env.OPENAI_MODEL!), middleware });

for (const prompt of ['I moved to Lisbon last month.', 'Where do I live now?']) {
  // streamText does not throw a failed stream's error: it goes to onError.
  let failure: unknown;
  const result = streamText({ model, prompt, onError: ({ error }) => void (failure = error) });
  for await (const text of result.textStream) process.stdout.write(text);
  process.stdout.write('\n');
  if (failure) throw failure;
}
console.log(`stored in conversation ${middleware.conversationId}`);
