// Save a memory, list memories by tag and search them with the typed client.
// Run against a started server: MEMRAG_URL=http://127.0.0.1:3000 [MEMRAG_API_KEY=…] npx tsx examples/typed-client.ts
import { createMemragClient } from '../src/client/memrag-client.js';

const client = createMemragClient({ baseUrl: process.env.MEMRAG_URL ?? 'http://127.0.0.1:3000', apiKey: process.env.MEMRAG_API_KEY });

const saved = await client.POST('/v1/memories', { body: { key: 'favourite-tea', content: 'Ada drinks green tea every morning', tags: ['ada', 'drinks'] } });
if (saved.error) throw new Error(`save failed: ${saved.error.error.code}: ${saved.error.error.message}`);
console.log(saved.data.created ? 'created' : 'replaced', saved.data.memory.key);

const page = await client.GET('/v1/memories', { params: { query: { tagsAll: ['ada'], limit: 10 } } });
for (const memory of page.data?.items ?? []) console.log(`${memory.key}: ${memory.content} [${memory.tags.join(', ')}]`);

const found = await client.POST('/v1/memories/search', { body: { query: 'what does Ada drink?', mode: 'hybrid', topK: 3 } });
for (const hit of found.data?.hits ?? [])
  console.log(hit.score.toFixed(3), `vector #${hit.ranks.vector ?? '-'}`, `text #${hit.ranks.text ?? '-'}`, hit.memory.content);
