// Wrap a model so that it recalls memrag's memories of the user and stores each finished turn.
// Run against a started server: MEMRAG_URL=http://127.0.0.1:3000 [MEMRAG_API_KEY=…] AI_GATEWAY_API_KEY=… npx tsx examples/ai-sdk-middleware.ts
import { gateway, streamText, wrapLanguageModel } from 'ai';
import { memragMemoryMiddleware } from 'memrag/ai-sdk';

const middleware = memragMemoryMiddleware({
  baseUrl: process.env.MEMRAG_URL ?? 'http://127.0.0.1:3000',
  apiKey: process.env.MEMRAG_API_KEY,
  userId: 'ada',
  // Failures never fail the generation; this is where they show.
  onError: (error, during) => console.warn(`memrag ${during} failed:`, error),
});

// A model through the Vercel AI Gateway; wrap any AI SDK model (a provider package's) the same way.
const model = wrapLanguageModel({ model: gateway('openai/gpt-4o-mini'), middleware });

for (const prompt of ['I moved to Lisbon last month.', 'Where do I live now?']) {
  const result = streamText({ model, prompt });
  for await (const text of result.textStream) process.stdout.write(text);
  process.stdout.write('\n');
}
console.log(`stored in conversation ${middleware.conversationId}`);
