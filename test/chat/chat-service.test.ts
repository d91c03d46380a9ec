import { describe, expect, it } from 'vitest';
import { type ChatEvent, type ChatReply, type ChatServiceOptions, type PausedReply, createChatService } from '../../src/chat/chat-service.js';
import type { LlmProvider, LlmRequest } from '../../src/llm/llm-provider.js';
import type { AssistantMessage } from '../../src/llm/messages.js';
import type { Memory, MemoryStore } from '../../src/memory/memory-types.js';
import { RunConflictError, RunInputError } from '../../src/runs/run-types.js';
import { fixedAgentRuntime } from '../../testkit/agent-runtime.js';
import { createInMemoryRunStore } from '../runs/support/in-memory-run-store.js';

const TEA: Memory = {
  key: 'tea',
  content: 'Alice prefers green tea in the afternoon.',
  tags: ['drinks'],
  metadata: {},
  agentId: 'alice',
  userId: null,
  sources: [],
  validFrom: null,
  validUntil: null,
  validTo: null,
  expiresAt: null,
  status: 'active',
  quarantineReasons: [],
  createdAt: new Date(0),
  updatedAt: new Date(0),
};

/** A memory store that finds TEA for every search; the chat reads nothing else of it here. */
const memories = {
  async search() {
    return [{ memory: TEA, score: 0.9, ranks: { vector: 1, text: 1 } }];
  },
} as unknown as MemoryStore;

/** A model that answers with `replies` in turn and records each request. */
function scriptedModel(replies: Array<Partial<AssistantMessage> | Error>): LlmProvider & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  const next = async (request: LlmRequest) => {
    // The request's callbacks (the retry listener) are not data: the clone keeps what was sent.
    requests.push(structuredClone({ ...request, signal: undefined, onRetry: undefined }));
    const reply = replies.shift();
    if (!reply) throw new Error('the script ran out');
    if (reply instanceof Error) throw reply;
    return {
      message: { role: 'assistant' as const, content: null, toolCalls: [], ...reply },
      usage: { promptTokens: 10, completionTokens: 5 },
      finishReason: 'stop',
    };
  };
  return { model: 'scripted', requests, complete: next, stream: next };
}

function chatWith(llm: LlmProvider | undefined, extra: Partial<ChatServiceOptions> = {}) {
  const runs = createInMemoryRunStore();
  const chat = createChatService({ tenantId: 't', memories, agentRuntime: fixedAgentRuntime(llm), runs, ...extra });
  return { chat, runs };
}

const LOCATION_TOOL = { type: 'function' as const, function: { name: 'get_location', parameters: { type: 'object', properties: {} } } };

describe('chat service', () => {
  it('answers without a model by quoting the recalled memory, and records a completed run', async () => {
    const { chat, runs } = chatWith(undefined);
    const events: ChatEvent['type'][] = [];
    const reply = (await chat.chat({ message: 'What tea does Alice like?', agentId: 'alice', onEvent: (e) => events.push(e.type) })) as ChatReply;
    expect(reply).toMatchObject({ status: 'completed', mode: 'extractive', citations: [{ kind: 'memory', key: 'tea' }] });
    expect(reply.answer).toContain('green tea');
    expect(events).toEqual(['retrieval', 'delta', 'done']);
    expect(await runs.get(reply.runId)).toMatchObject({ status: 'completed', stopReason: 'completed' });
  });

  it('gives the model the sources in the user turn, never the system prompt, and cites what it used', async () => {
    const model = scriptedModel([{ content: 'Green tea [1].' }]);
    const { chat, runs } = chatWith(model);
    const reply = (await chat.chat({ message: 'What tea does Alice like?', agentId: 'alice' })) as ChatReply;
    expect(reply).toMatchObject({ mode: 'llm', answer: 'Green tea [1].', citations: [{ id: 1, kind: 'memory', key: 'tea' }] });
    const [system, user] = model.requests[0]!.messages;
    expect(system).toMatchObject({ role: 'system' });
    expect(system!.content).not.toContain('green tea');
    expect(user).toMatchObject({ role: 'user' });
    expect(user!.content).toContain('Alice prefers green tea');
    expect(await runs.get(reply.runId)).toMatchObject({ status: 'completed', usage: { promptTokens: 10, completionTokens: 5 } });
  });

  it('pauses for a client tool, keeps the run until answered, and goes on with the output', async () => {
    const model = scriptedModel([{ toolCalls: [{ id: 'call-1', name: 'get_location', arguments: '{}' }] }, { content: 'You are in Lisbon.' }]);
    const { chat, runs } = chatWith(model);
    const paused = (await chat.chat({ message: 'Where am I?', agentId: 'alice', conversationId: 'c1', clientTools: [LOCATION_TOOL] })) as PausedReply;
    expect(paused).toMatchObject({ status: 'requires_action', requiredAction: { toolCalls: [{ id: 'call-1', function: { name: 'get_location' } }] } });
    expect(await runs.get(paused.runId)).toMatchObject({ status: 'requires_action' });
    // The conversation takes no other turn while its run waits.
    await expect(chat.chat({ message: 'Hello?', agentId: 'alice', conversationId: 'c1' })).rejects.toMatchObject({ code: 'run_waiting' });

    const done = (await chat.resume({ runId: paused.runId, toolOutputs: [{ toolCallId: 'call-1', output: 'Lisbon' }] })) as ChatReply;
    expect(done).toMatchObject({ status: 'completed', answer: 'You are in Lisbon.', runId: paused.runId });
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'call-1', content: 'Lisbon' });
    expect(await chat.getRun(paused.runId)).toMatchObject({ status: 'completed' });
  });

  it('refuses answers to calls the run does not wait on, and answers that leave one out', async () => {
    const model = scriptedModel([{ toolCalls: [{ id: 'call-1', name: 'get_location', arguments: '{}' }] }]);
    const { chat } = chatWith(model);
    const paused = (await chat.chat({ message: 'Where am I?', agentId: 'alice', clientTools: [LOCATION_TOOL] })) as PausedReply;
    const unknown = chat.beginResume({ runId: paused.runId, toolOutputs: [{ toolCallId: 'call-2', output: 'x' }] });
    await expect(unknown).rejects.toBeInstanceOf(RunConflictError);
    await expect(unknown).rejects.toMatchObject({ code: 'tool_call_not_pending' });
    await expect(chat.beginResume({ runId: paused.runId, toolOutputs: [] })).rejects.toBeInstanceOf(RunInputError);
    // Approval decisions do not answer a run that waits for tool outputs.
    await expect(chat.beginResume({ runId: paused.runId, decisions: [{ toolCallId: 'call-1', approve: true }] })).rejects.toMatchObject({
      code: 'run_not_waiting',
    });
  });

  it('cancels a paused run, which then takes no answer', async () => {
    const model = scriptedModel([{ toolCalls: [{ id: 'call-1', name: 'get_location', arguments: '{}' }] }]);
    const { chat } = chatWith(model);
    const paused = (await chat.chat({ message: 'Where am I?', agentId: 'alice', clientTools: [LOCATION_TOOL] })) as PausedReply;
    expect(await chat.cancelRun(paused.runId)).toMatchObject({ status: 'cancelled', error: { code: 'run_cancelled' } });
    await expect(chat.resume({ runId: paused.runId, toolOutputs: [{ toolCallId: 'call-1', output: 'x' }] })).rejects.toMatchObject({ code: 'run_not_waiting' });
    await expect(chat.cancelRun(paused.runId)).rejects.toMatchObject({ code: 'run_not_waiting' });
  });

  it('records a failed run with the error as describeError tells it, and emits the error', async () => {
    const model = scriptedModel([new Error('secret provider detail')]);
    const { chat, runs } = chatWith(model, { describeError: () => ({ code: 'llm_error', message: 'The model failed.' }) });
    const events: ChatEvent[] = [];
    await expect(chat.chat({ message: 'Hi', agentId: 'alice', onEvent: (e) => events.push(e) })).rejects.toThrow('secret provider detail');
    expect(events.at(-1)).toMatchObject({ type: 'error' });
    const retrieval = events.find((e) => e.type === 'retrieval');
    const runId = retrieval?.type === 'retrieval' ? retrieval.runId : '';
    expect(await runs.get(runId)).toMatchObject({ status: 'failed', error: { code: 'llm_error', message: 'The model failed.' } });
  });
  it('starts the follow-ups of a run whose end was written but whose reply was lost, found on the retry', async () => {
    const runs = createInMemoryRunStore();
    let lost = false;
    // The first end is written, then its reply is lost: the retry finds the run ended already.
    const flaky = {
      ...runs,
      async endClaimed(id: string, update: Parameters<typeof runs.endClaimed>[1]) {
        const ended = await runs.endClaimed(id, update);
        if (!lost) {
          lost = true;
          throw new Error('connection lost');
        }
        return ended;
      },
    };
    const queued = async () => {
      expect(await runs.addFollowUp('run-1', { runId: 'run-2', message: 'And coffee?' })).toBe(true);
      return { content: 'Green tea.' };
    };
    const model = scriptedModel([]);
    const replies: Array<() => Promise<Partial<AssistantMessage>>> = [queued, async () => ({ content: 'No coffee.' })];
    const next = async () => ({
      message: { role: 'assistant' as const, content: null, toolCalls: [], ...(await replies.shift()!()) },
      usage: { promptTokens: 1, completionTokens: 1 },
      finishReason: 'stop',
    });
    const chat = createChatService({ tenantId: 't', memories, agentRuntime: fixedAgentRuntime({ ...model, complete: next, stream: next }), runs: flaky });
    const reply = (await chat.chat({ message: 'What tea does Alice like?', agentId: 'alice', runId: 'run-1' })) as ChatReply;
    expect(reply).toMatchObject({ status: 'completed', answer: 'Green tea.' });
    expect(lost).toBe(true);
    await expect.poll(async () => (await runs.get('run-2'))?.status).toBe('completed');
  });
});
