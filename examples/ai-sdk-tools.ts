// Give a model memrag's memories, documents and past turns as AI SDK tools.
// Run against a started server: MEMRAG_URL=http://127.0.0.1:3000 [MEMRAG_API_KEY=…] npx tsx examples/ai-sdk-tools.ts
// The model is any OpenAI-compatible one that calls tools: OPENAI_BASE_URL, OPENAI_API_KEY and
// OPENAI_MODEL (e.g. http://127.0.0.1:11434/v1 and llama3.1:8b for Ollama). Unset, it is memrag's own
// `/v1` (model `memrag`), which without an LLM of its own answers from its memories and calls no tools.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs } from 'ai';
import { memragTools } from 'memrag/ai-sdk';

const memragUrl = process.env.MEMRAG_URL ?? 'http://127.0.0.1:3000';

// Any AI SDK model (a provider package's) fits here.
// This one is memrag's own `/v1` unless OPENAI_BASE_URL names another server; memrag's key goes to memrag only.
const ownModel = !process.env.OPENAI_BASE_URL;
if (!ownModel && !process.env.OPENAI_MODEL) throw new Error('OPENAI_BASE_URL is set: set OPENAI_MODEL too');
const provider = createOpenAICompatible({
  name: 'llm',
  baseURL: process.env.OPENAI_BASE_URL ?? `${memragUrl}/v1`,
  apiKey: ownModel ? process.env.MEMRAG_API_KEY : process.env.OPENAI_API_KEY,
});
const model = provider(ownModel ? 'memrag' : process.env.OPENAI_MODEL!);

// Memories the tools save are Ada's, and their searches read hers and the agent's shared ones.
const tools = memragTools({ baseUrl: memragUrl, apiKey: process.env.MEMRAG_API_KEY, userId: 'ada' });

const saved = await generateText({
  model,
  tools,
  stopWhen: stepCountIs(3),
  prompt: 'Remember that I drink green tea every morning.',
});
console.log(saved.text);

const answered = await generateText({
  model,
  tools,
  stopWhen: stepCountIs(5),
  system: 'Look up what you know about the user with your tools before you answer.',
  prompt: 'What should I drink tomorrow morning?',
});
for (const step of answered.steps) for (const call of step.toolCalls) console.log(`called ${call.toolName}`, JSON.stringify(call.input));
console.log(answered.text);
