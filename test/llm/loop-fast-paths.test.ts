import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/messages.js';
import { createTextCallReader } from '../../src/llm/text-call-reply.js';
import { MISSING_TOOL_RESULT, appendRepaired, repairToolResults } from '../../src/llm/tool-history.js';

// The loop skips work a turn does not need (issue 55); these pin that the skipping changes no result.
const offers = (name: string) => name === 'search';
const call = '<tool_call>{"name":"search","arguments":{"query":"x"}}</tool_call>';

describe('text calls read without a listener (a reply not streamed)', () => {
  const read = (content: string) => createTextCallReader(true, undefined, offers).read({ role: 'assistant', content, toolCalls: [] });

  it('reads calls after any whitespace trim removes, including vertical tab, form feed and no-break space', () => {
    for (const space of [' \n', '\v', '\f', '\u00a0', '\ufeff']) {
      const message = read(`${space}${call}`);
      expect(message.toolCalls.map((c) => c.name)).toEqual(['search']);
      expect(message.content).toBeNull();
    }
  });

  it('leaves an answer that starts with anything else as it is, and reads each spelling that opens with < [ or a fence', () => {
    expect(read('The answer is 42.').toolCalls).toEqual([]);
    expect(read('[TOOL_CALLS][{"name":"search","arguments":{}}]').toolCalls).toHaveLength(1);
    expect(read('```json\n{"name":"search","arguments":{}}\n```').toolCalls).toHaveLength(1);
    expect(read('<function=search>{"query":"x"}</function>').toolCalls).toHaveLength(1);
  });
});

describe('appendRepaired', () => {
  const assistant = (...ids: string[]): ChatMessage => ({
    role: 'assistant',
    content: null,
    toolCalls: ids.map((id) => ({ id, name: 'search', arguments: '{}' })),
  });
  const tool = (id: string): ChatMessage => ({ role: 'tool', toolCallId: id, content: 'ok' });

  it('repairs the two parts as one history: a call before the turn answered in it keeps its result', () => {
    const out = appendRepaired(
      [{ role: 'system', content: 's' }],
      [assistant('a', 'b'), tool('a')],
      [tool('b'), tool('b'), { role: 'user', content: 'next' }, assistant('c')],
    );
    expect(out).toEqual([
      { role: 'system', content: 's' },
      assistant('a', 'b'),
      tool('a'),
      tool('b'),
      { role: 'user', content: 'next' },
      assistant('c'),
      { role: 'tool', toolCallId: 'c', content: MISSING_TOOL_RESULT, isError: true },
    ]);
  });

  it('gives what repairToolResults gives for the joined history', () => {
    const before = [tool('x'), assistant('a'), { role: 'user', content: 'u' } as ChatMessage];
    const after = [assistant('b', 'c'), tool('c')];
    expect(appendRepaired([], before, after)).toEqual(repairToolResults([...before, ...after]));
  });
});
