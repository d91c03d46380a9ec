import { randomUUID } from 'node:crypto';

/** What the fuzz tests seed through the API before they start, so that reads have something to find. */
export interface FuzzSeeds {
  memoryKey: string;
  documentId: string;
  conversationId: string;
  agentId: string;
}

/** A request a route accepts (or answers 404 to): the starting point each mutation breaks one part of. */
export interface BaseRequest {
  params: Record<string, string>;
  query: [string, string][];
  body?: Record<string, unknown>;
}

export function conversationExport(id = randomUUID()) {
  return {
    format: 'memrag.conversation',
    version: 1,
    conversation: { id, agentId: 'default', title: 'Tea talk', createdAt: '2025-01-01T00:00:00.000Z', updatedAt: '2025-01-01T00:00:00.000Z' },
    messages: [
      { seq: 1, turn: 1, role: 'user', content: 'What does Alice drink?' },
      { seq: 2, turn: 1, role: 'assistant', content: 'Green tea.', toolCalls: [] },
    ],
    checkpoints: [],
    summary: null,
  };
}

/**
 * A base request for each route this suite knows. A route it does not know (added later) still
 * gets fuzzed, from a generic base (`genericBase`); it is only held to the weaker checks then,
 * since the suite cannot tell which of its inputs are valid.
 */
export function knownBases(seeds: FuzzSeeds): Record<string, BaseRequest> {
  const absent = '00000000-0000-4000-8000-000000000000';
  return {
    'GET /healthz': { params: {}, query: [] },
    'GET /readyz': { params: {}, query: [] },
    'GET /metrics': { params: {}, query: [] },
    'GET /openapi.json': { params: {}, query: [] },
    'GET /docs': { params: {}, query: [] },
    'GET /docs/:asset': { params: { asset: 'swagger-init.js' }, query: [] },
    'POST /v1/memories/search': {
      params: {},
      query: [],
      body: { query: 'green tea last week', topK: 3, mode: 'hybrid', tagsAny: ['alice'], weights: { vector: 1, text: 1 }, asOf: '2030-01-01T00:00:00Z' },
    },
    'POST /v1/memories': { params: {}, query: [], body: { key: 'fuzz', content: 'fuzzed content', tags: ['fuzz'], metadata: { n: 1, list: ['a'] } } },
    'PUT /v1/memories/:key': { params: { key: seeds.memoryKey }, query: [], body: { content: 'Alice prefers green tea', tags: ['alice'], metadata: { v: 1 } } },
    'GET /v1/memories/:key': { params: { key: seeds.memoryKey }, query: [['agentId', 'default']] },
    // Destructive routes aim at nothing, so that a request the route accepts deletes nothing the suite relies on.
    'DELETE /v1/memories/:key': { params: { key: 'absent-key' }, query: [] },
    'PATCH /v1/memories/:key': { params: { key: seeds.memoryKey }, query: [], body: { addTags: ['fuzz'], removeTags: ['old'], ttlSeconds: 3600 } },
    'POST /v1/memories/batch': {
      params: {},
      query: [['userId', 'fuzzer']],
      body: { memories: [{ key: 'fuzz-batch', content: 'fuzzed batch content', tags: ['fuzz'] }] },
    },
    'POST /v1/memories/extract': {
      params: {},
      query: [],
      body: { messages: [{ role: 'user', content: 'I live in Oslo.' }], agentId: 'default', userId: 'alice' },
    },
    'GET /v1/memories/:key/history': { params: { key: seeds.memoryKey }, query: [['agentId', 'default']] },
    'POST /v1/memories/:key/approve': { params: { key: seeds.memoryKey }, query: [['agentId', 'default']] },
    'GET /v1/memories': {
      params: {},
      query: [
        ['tagsAny', 'alice'],
        ['limit', '5'],
        ['metadata', '{"n":{"$gte":1}}'],
      ],
    },
    'DELETE /v1/memories': { params: {}, query: [['tagsAny', 'no-such-tag']] },
    'GET /v1/tags': { params: {}, query: [['agentId', 'default']] },
    'POST /v1/chat/completions': {
      params: {},
      query: [],
      body: {
        model: 'memrag',
        user: 'alice',
        messages: [
          { role: 'system', content: 'Answer briefly.' },
          { role: 'user', content: 'What does Alice drink?' },
        ],
        temperature: 0.5,
        stream: false,
      },
    },
    'GET /v1/models': { params: {}, query: [] },
    'GET /v1/models/:model': { params: { model: 'memrag' }, query: [] },
    'POST /v1/chat': {
      params: {},
      query: [],
      body: {
        message: 'What does Alice drink?',
        userId: 'alice',
        topK: 2,
        tagsAny: ['alice'],
        tools: [
          {
            type: 'function',
            function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
          },
        ],
      },
    },
    'GET /v1/conversations': {
      params: {},
      query: [
        ['limit', '5'],
        ['userId', 'alice'],
      ],
    },
    'POST /v1/conversations/import': { params: {}, query: [['userId', 'alice']], body: conversationExport() },
    'POST /v1/turns/search': {
      params: {},
      query: [],
      body: {
        query: 'What does Alice drink?',
        agentId: 'default',
        userId: 'alice',
        excludeConversationId: absent,
        topK: 3,
        mode: 'hybrid',
        minScore: 0,
        weights: { vector: 1, text: 1 },
        asOf: '2030-01-01T00:00:00Z',
        groupBy: 'conversation',
      },
    },
    // Runs: a run id of nobody's, so that an accepted request is a 404 that changes nothing.
    'GET /v1/runs/:runId': { params: { runId: absent }, query: [] },
    'POST /v1/runs/:runId/tool-outputs': { params: { runId: absent }, query: [], body: { toolOutputs: [{ toolCallId: 'call_1', output: '{"city":"Oslo"}' }] } },
    'POST /v1/runs/:runId/approvals': { params: { runId: absent }, query: [], body: { decisions: [{ toolCallId: 'call_1', approve: false, reason: 'no' }] } },
    'POST /v1/runs/:runId/cancel': { params: { runId: absent }, query: [] },
    'GET /v1/runs/:runId/events': { params: { runId: absent }, query: [] },
    'POST /v1/runs/:runId/messages': { params: { runId: absent }, query: [], body: { message: 'Answer in French', mode: 'steer' } },
    'POST /v1/runs/:runId/pause': { params: { runId: absent }, query: [] },
    'POST /v1/runs/:runId/resume': { params: { runId: absent }, query: [], body: { stream: false } },
    'GET /v1/conversations/:id': { params: { id: seeds.conversationId }, query: [] },
    'GET /v1/conversations/:id/export': { params: { id: seeds.conversationId }, query: [['agentId', 'default']] },
    'DELETE /v1/conversations/:id': { params: { id: absent }, query: [] },
    // A conversation of its own: the first accepted request starts it, with Alice as its user.
    'POST /v1/conversations/:id/turns': {
      params: { id: randomUUID() },
      query: [],
      body: { agentId: 'default', userId: 'alice', user: 'What does Alice drink?', assistant: 'Green tea.' },
    },
    'POST /v1/documents': {
      params: {},
      query: [],
      body: {
        title: 'Tea guide',
        text: '# Tea\n\nGreen tea is steamed.',
        format: 'markdown',
        tags: ['tea'],
        source: 'wiki://tea',
        maxTokens: 64,
        overlapTokens: 8,
      },
    },
    'GET /v1/documents': {
      params: {},
      query: [
        ['tagsAny', 'tea'],
        ['limit', '5'],
      ],
    },
    'GET /v1/documents/:id': { params: { id: seeds.documentId }, query: [] },
    'GET /v1/documents/:id/chunks': { params: { id: seeds.documentId }, query: [['limit', '5']] },
    'DELETE /v1/documents/:id': { params: { id: absent }, query: [] },
    'POST /v1/agents': {
      params: {},
      query: [],
      body: {
        name: 'Fuzz agent',
        instructions: 'Be brief.',
        model: 'gpt-4o-mini',
        temperature: 0.5,
        tools: { deny: ['delete_memory'] },
        recall: { memoryTopK: 3, tagsAny: ['fuzz'] },
      },
    },
    'GET /v1/agents': { params: {}, query: [['limit', '5']] },
    'GET /v1/providers': { params: {}, query: [] },
    'GET /v1/providers/:name/models': { params: { name: 'absent-provider' }, query: [] },
    'GET /v1/agents/:id': { params: { id: seeds.agentId }, query: [] },
    'PATCH /v1/agents/:id': {
      params: { id: seeds.agentId },
      query: [],
      body: { instructions: 'Answer in French.', temperature: null, budget: { maxTokens: 1000 } },
    },
    'DELETE /v1/agents/:id': { params: { id: 'absent-agent' }, query: [] },
    'GET /v1/agents/:id/versions': { params: { id: seeds.agentId }, query: [['limit', '5']] },
    'GET /v1/agents/:id/versions/:version': { params: { id: seeds.agentId, version: '1' }, query: [] },
    'POST /v1/workflows': {
      params: {},
      query: [],
      body: {
        name: 'Fuzz flow',
        entry: 'a',
        nodes: [
          { id: 'a', agentId: seeds.agentId, prompt: 'Answer {{input}}' },
          { id: 'b', agentId: seeds.agentId, prompt: '{{nodes.a.output}}' },
        ],
        edges: [{ from: 'a', to: 'b', when: { outputMatches: '^yes' } }],
        maxSteps: 5,
      },
    },
    'GET /v1/workflows': { params: {}, query: [['limit', '5']] },
    'GET /v1/workflows/:id': { params: { id: 'absent-workflow' }, query: [] },
    'PATCH /v1/workflows/:id': { params: { id: 'absent-workflow' }, query: [], body: { name: 'Renamed', maxSteps: null } },
    'DELETE /v1/workflows/:id': { params: { id: 'absent-workflow' }, query: [] },
    'GET /v1/workflows/:id/versions': { params: { id: 'absent-workflow' }, query: [] },
    'POST /v1/workflows/:id/runs': { params: { id: 'absent-workflow' }, query: [], body: { input: 'fuzz' } },
    'PUT /v1/blocks/:label': {
      params: { label: 'prefs' },
      query: [],
      body: { userId: 'alice', value: 'Likes green tea.', description: 'standing preferences', limit: 500, readOnly: false },
    },
    'GET /v1/blocks/:label': { params: { label: 'prefs' }, query: [['userId', 'alice']] },
    'GET /v1/blocks': { params: {}, query: [['agentId', seeds.agentId]] },
    'DELETE /v1/blocks/:label': { params: { label: 'absent-block' }, query: [['userId', 'alice']] },
    'GET /v1/blocks/:label/history': { params: { label: 'prefs' }, query: [['userId', 'alice']] },
    'POST /v1/blocks/:label/history/:eventId/approve': { params: { label: 'prefs', eventId: '1' }, query: [['userId', 'alice']] },
    'GET /v1/jobs': {
      params: {},
      query: [
        ['status', 'succeeded'],
        ['limit', '5'],
      ],
    },
    'GET /v1/jobs/:id': { params: { id: absent }, query: [] },
    'GET /v1/jobs/:id/events': { params: { id: absent }, query: [] },
    'POST /v1/jobs/:id/cancel': { params: { id: absent }, query: [] },
    'POST /v1/jobs/:id/retry': { params: { id: absent }, query: [] },
    // A user the suite never gives data: an erasure the route accepts erases nothing it relies on.
    'DELETE /v1/users/:userId': { params: { userId: 'fuzz-absent-user' }, query: [] },
    'GET /v1/audit': {
      params: {},
      query: [
        ['userId', 'fuzz-absent-user'],
        ['limit', '5'],
      ],
    },
    'POST /v1/search': { params: {}, query: [], body: { query: 'green tea', topK: 3, candidateK: 20, mode: 'hybrid', reranker: 'lexical', tagsAny: ['tea'] } },
    'GET /v1/export': { params: {}, query: [['agentId', 'default']] },
    'GET /v1/keys': { params: {}, query: [] },
    'DELETE /v1/keys/:id': { params: { id: absent }, query: [] },
    // Accepted, it stores a key and so turns authentication on: the app mounts it last (see src/http/app.ts).
    'POST /v1/keys': { params: {}, query: [], body: { name: 'fuzz', scopes: ['read'] } },
    // One line, the header: an export of nothing, which imports nothing.
    'POST /v1/import': {
      params: {},
      query: [['atomic', 'true']],
      body: { type: 'header', format: 'memrag.export', version: 1, exportedAt: '2025-01-01T00:00:00.000Z', scope: {} },
    },
  };
}

export function genericBase(method: string, path: string): BaseRequest {
  const params = Object.fromEntries([...path.matchAll(/:(\w+)/g)].map((m) => [m[1]!, 'x']));
  return { params, query: [], ...(['POST', 'PUT', 'PATCH'].includes(method) ? { body: {} } : {}) };
}
