import { describe, expect, it } from 'vitest';
import { EmptyReplyError } from '../../src/llm/llm-errors.js';
import type { LlmProvider, LlmRequest, LlmResult } from '../../src/llm/llm-provider.js';
import type { AssistantMessage } from '../../src/llm/messages.js';
import { EMPTY_REPLY_NUDGE, type ModelCallOptions, callModel } from '../../src/llm/model-call.js';

/** Answers with the given messages in turn, each costing 10 + 5 tokens, and keeps the requests. */
function scripted(replies: AssistantMessage[]): LlmProvider & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  const answer = async (request: LlmRequest): Promise<LlmResult> => {
    requests.push(request);
    const message = replies[requests.length - 1];
    if (!message) throw new Error('no reply scripted');
    return { message, usage: { promptTokens: 10, completionTokens: 5 }, finishReason: 'stop' };
  };
  return { model: 'scripted', requests, complete: answer, stream: answer };
}

const empty: AssistantMessage = { role: 'assistant', content: ' ', toolCalls: [] };

function options(provider: LlmProvider, overrides: Partial<ModelCallOptions> = {}): ModelCallOptions {
  return {
    provider,
    systemPrompt: 'Be brief.',
    messages: [{ role: 'user', content: 'Hello' }],
    newMessages: [],
    tools: [],
    hooks: [],
    streaming: false,
    signal: undefined,
    onEvent: undefined,
    iteration: 1,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    maxEmptyRetries: 2,
    overBudget: () => false,
    ...overrides,
  };
}

describe('one model call', () => {
  it('answers an empty reply with a nudge in the retried request only, and counts every request', async () => {
    const provider = scripted([empty, { role: 'assistant', content: 'Hi.', toolCalls: [] }]);
    const call = options(provider);
    expect((await callModel(call))?.message).toEqual({ role: 'assistant', content: 'Hi.', toolCalls: [] });
    expect(provider.requests.map((r) => r.messages.at(-1)?.content)).toEqual(['Hello', EMPTY_REPLY_NUDGE]);
    expect(provider.requests[0]!.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(call.usage).toEqual({ promptTokens: 20, completionTokens: 10, totalTokens: 30 });
  });

  it('makes no retry past the budget: undefined once the budget is spent after an empty reply', async () => {
    const provider = scripted([empty, empty]);
    expect(await callModel(options(provider, { overBudget: () => true }))).toBeUndefined();
    expect(provider.requests).toHaveLength(1);
  });

  it('gives up after maxEmptyRetries nudges', async () => {
    const provider = scripted([empty, empty, empty]);
    await expect(callModel(options(provider, { maxEmptyRetries: 1 }))).rejects.toBeInstanceOf(EmptyReplyError);
    expect(provider.requests).toHaveLength(2);
  });

  it('gives every call an id of its own: a replayed id is dropped, a missing one filled in', async () => {
    const calls = [
      { id: 'a', name: 'lookup', arguments: '{}' },
      { id: 'a', name: 'lookup', arguments: '{}' },
      { id: '', name: 'lookup', arguments: '{"q":1}' },
    ];
    const message = (await callModel(options(scripted([{ role: 'assistant', content: null, toolCalls: calls }]))))?.message;
    expect(message?.toolCalls.map((c) => c.id)).toEqual(['a', expect.stringMatching(/^call_2_/)]);
  });
});
