// Talk to memrag with the official OpenAI client: memrag recalls the user's memories and past
// turns, cites them, and keeps the turn. The client keeps the thread, as with any OpenAI model.
// Run against a started server: MEMRAG_URL=http://127.0.0.1:3000 [MEMRAG_API_KEY=…] npx tsx examples/openai-client.ts
import OpenAI from 'openai';

const base = process.env.MEMRAG_URL ?? 'http://127.0.0.1:3000';
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: process.env.MEMRAG_API_KEY ?? 'memrag-without-keys' });

// Something to remember, through memrag's own API (the model can also save memories itself).
const saved = await fetch(`${base}/v1/memories`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(process.env.MEMRAG_API_KEY ? { authorization: `Bearer ${process.env.MEMRAG_API_KEY}` } : {}) },
  body: JSON.stringify({ key: 'ada-tea', content: 'Ada drinks green tea every morning.', userId: 'ada' }),
});
if (!saved.ok) throw new Error(`saving the memory failed: ${saved.status} ${await saved.text()}`);

// `model` names the agent ("memrag", or "memrag:<agentId>"); `user` whose memories are recalled.
const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'Answer in one sentence.' },
  { role: 'user', content: 'What do I drink in the morning?' },
];
const completion = await client.chat.completions.create({ model: 'memrag', user: 'ada', messages });
const answer = completion.choices[0]?.message.content ?? '';
console.log('answer:', answer);
// What memrag adds beside OpenAI's fields: the citations, and where the turn was stored.
const { memrag } = completion as typeof completion & { memrag: { citations: Array<{ id: number; kind: string }>; conversationId: string } };
for (const citation of memrag.citations) console.log(`cites [${citation.id}]: a ${citation.kind}`);

// The same thread, streamed: send the history back with the next question.
messages.push({ role: 'assistant', content: answer }, { role: 'user', content: 'And is that every day?' });
const stream = await client.chat.completions.create({ model: 'memrag', user: 'ada', messages, stream: true });
process.stdout.write('streamed: ');
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta.content ?? '');
process.stdout.write('\n');
console.log('conversation:', memrag.conversationId);
