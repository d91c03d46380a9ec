// Give a model memrag's memories, documents and past turns as AI SDK tools.
// Run against a started server: MEMRAG_URL=http://127.0.0.1:3000 [MEMRAG_API_KEY=…] AI_GATEWAY_API_KEY=… npx tsx examples/ai-sdk-tools.ts
import { type LanguageModel, generateText, stepCountIs } from 'ai';
import { memragTools } from 'memrag/ai-sdk';

// A model id routed through the Vercel AI Gateway; any AI SDK model (a provider package's) fits here.
const model: LanguageModel = 'openai/gpt-4o-mini';

const tools = memragTools({
  baseUrl: process.env.MEMRAG_URL ?? 'http://127.0.0.1:3000',
  apiKey: process.env.MEMRAG_API_KEY,
  userId: 'ada',
});

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
