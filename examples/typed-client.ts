// Save a user's memory, list that user's memories by tag and search them with the typed client.
// Run against a started server: MEMRAG_URL=http://127.0.0.1:3000 [MEMRAG_API_KEY=…] npx tsx examples/typed-client.ts
import { createMemragClient } from '../src/client/memrag-client.js';

const client = createMemragClient({ baseUrl: process.env.MEMRAG_URL ?? 'http://127.0.0.1:3000', apiKey: process.env.MEMRAG_API_KEY });

// With `userId` the memory is Ada's: recalled in her chats only. Without it, it would be the agent's
// shared memory, recalled in every user's chats.
const userId = 'ada';

const saved = await client.POST('/v1/memories', { body: { key: 'favourite-tea', content: 'Ada drinks green tea every morning', tags: ['drinks'], userId } });
if (saved.error) throw new Error(`save failed: ${saved.error.error.code}: ${saved.error.error.message}`);
console.log(saved.data.created ? 'created' : 'replaced', saved.data.memory.key, 'for', saved.data.memory.userId);

// Reads name the user too: a list or search without `userId` spans every user's memories.
const page = await client.GET('/v1/memories', { params: { query: { userId, tagsAll: ['drinks'], limit: 10 } } });
if (page.error) throw new Error(`list failed: ${page.error.error.code}: ${page.error.error.message}`);
for (const memory of page.data.items) console.log(`${memory.key}: ${memory.content} [${memory.tags.join(', ')}]`);

// `includeShared` adds the agent's shared memories, as a chat turn with this user recalls them.
const found = await client.POST('/v1/memories/search', { body: { query: 'what does Ada drink?', userId, includeShared: true, mode: 'hybrid', topK: 3 } });
if (found.error) throw new Error(`search failed: ${found.error.error.code}: ${found.error.error.message}`);
for (const hit of found.data.hits)
  console.log(hit.score.toFixed(3), `vector #${hit.ranks.vector ?? '-'}`, `text #${hit.ranks.text ?? '-'}`, hit.memory.content);
