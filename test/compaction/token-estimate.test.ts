import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/messages.js';
import {
  MESSAGE_OVERHEAD_TOKENS,
  REPLY_PRIMING_TOKENS,
  TOOL_CALL_OVERHEAD_TOKENS,
  estimateMessageTokens,
  estimateMessagesTokens,
  estimateTextTokens,
  estimateToolSpecTokens,
} from '../../src/compaction/token-estimate.js';

describe('token estimate', () => {
  it('counts the message overhead, the text and every tool call', () => {
    const text = 'Alice prefers green tea in the afternoon.';
    expect(estimateMessageTokens({ role: 'user', content: text })).toBe(MESSAGE_OVERHEAD_TOKENS + estimateTextTokens(text));
    const call: ChatMessage = { role: 'assistant', content: null, toolCalls: [{ id: 'c', name: 'search_memories', arguments: '{"query":"tea"}' }] };
    expect(estimateMessageTokens(call)).toBe(
      MESSAGE_OVERHEAD_TOKENS + TOOL_CALL_OVERHEAD_TOKENS + estimateTextTokens('search_memories') + estimateTextTokens('{"query":"tea"}'),
    );
    expect(estimateMessagesTokens([{ role: 'user', content: text }, call])).toBe(
      REPLY_PRIMING_TOKENS + estimateMessageTokens({ role: 'user', content: text }) + estimateMessageTokens(call),
    );
  });

  it('errs high on English: at least one token per short word', () => {
    const words = 'the cat sat on the mat and then it ran off to the barn'.split(' ');
    expect(estimateTextTokens(words.join(' '))).toBeGreaterThanOrEqual(words.length);
    // Scripts written without spaces count a token per character.
    expect(estimateTextTokens('東京都に住んでいます')).toBe(10);
  });

  it('counts tool definitions from their JSON', () => {
    const spec = { name: 'save_memory', description: 'Save a memory', parameters: { type: 'object', properties: { key: { type: 'string' } } } };
    expect(estimateToolSpecTokens([spec])).toBe(estimateTextTokens(JSON.stringify(spec)) + MESSAGE_OVERHEAD_TOKENS);
    expect(estimateToolSpecTokens([])).toBe(0);
  });
});
