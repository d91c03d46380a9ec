/** The groups of the OpenAPI document, in the order its readers see them; each route names one. */
export const TAGS = {
  memories: 'Memories',
  documents: 'Documents',
  search: 'Search',
  chat: 'Chat',
  openAi: 'OpenAI-compatible',
  conversations: 'Conversations',
  runs: 'Runs',
  turns: 'Turns',
  agents: 'Agents',
  jobs: 'Jobs',
  users: 'Users',
  audit: 'Audit',
  keys: 'API keys',
  portability: 'Export and import',
  operations: 'Operations',
  documentation: 'Documentation',
  console: 'Console',
} as const;

export type ApiTag = (typeof TAGS)[keyof typeof TAGS];

export const TAG_DESCRIPTIONS: Record<ApiTag, string> = {
  [TAGS.memories]: 'Memories: short facts saved per agent and key, searched by meaning and by words.',
  [TAGS.documents]: 'Documents: ingested text and files, cut into chunks for retrieval.',
  [TAGS.search]: 'Retrieval over document chunks, with citation fields.',
  [TAGS.chat]: 'Grounded answers from memories, documents and past turns.',
  [TAGS.openAi]: "OpenAI's chat completions and models, with memory: point an OpenAI client's base URL at `/v1`. Errors are in OpenAI's shape.",
  [TAGS.conversations]: 'Stored chat conversations of an agent: read, export, import, delete.',
  [TAGS.runs]: 'Chat turns as runs: their status, and the answers a paused one waits for (client tool outputs, approvals).',
  [TAGS.turns]: "Past turns of an agent's conversations, searched by meaning and by words (episodic recall).",
  [TAGS.agents]: 'Agents: the versioned settings (instructions, model, tools, budget, recall) a chat runs with for an `agentId`.',
  [TAGS.jobs]: 'Durable jobs: asynchronous and batch ingestion, with progress, run by workers sharing the database.',
  [TAGS.users]: "A user's data across agents: erasure (memories, conversations, runs, jobs), recorded in the audit log.",
  [TAGS.audit]: 'What must stay answerable for (admin operations and deletions): who did it, to which user, ids and counts; never content.',
  [TAGS.keys]: "The tenant's API keys and their scopes (`read`, `write`, `admin`): created, listed and revoked by an admin key.",
  [TAGS.portability]: "A tenant's memories (with their history), agents and conversations as NDJSON, and back; Mem0 memories in.",
  [TAGS.operations]: 'Probes and metrics, outside `/v1`: no API key, no rate limit.',
  [TAGS.documentation]: 'This document and its interactive page.',
  [TAGS.console]: 'The web console over this API, and what its page needs to start.',
};
