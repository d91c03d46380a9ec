import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/llm/agent-types.js';
import { createTextCallReader } from '../../src/llm/text-call-reply.js';

const usage = { promptTokens: 1, completionTokens: 1 };
const offers = (name: string) => name === 'search';

function reader() {
  const seen: AgentEvent[] = [];
  const text = createTextCallReader(true, (event) => seen.push(event), offers);
  const deltas = () => seen.filter((event) => event.type === 'delta').map((event) => (event as { text: string }).text);
  return { text, deltas };
}

describe('createTextCallReader', () => {
  // A compatible server's `max_tokens` is a cut like OpenAI's `length`: the continuation may finish the call.
  for (const finishReason of ['length', 'max_tokens']) {
    it(`holds a call cut by the output limit (finish_reason ${finishReason}) until its continuation, never showing it as the answer`, () => {
      const { text, deltas } = reader();
      const first = '<tool_call>{"name":"search","argu';
      const rest = 'ments":{"query":"x"}}</tool_call>';
      text.onEvent!({ type: 'turn_start', iteration: 0 });
      text.onEvent!({ type: 'delta', text: first, iteration: 0 });
      text.onEvent!({ type: 'turn_end', iteration: 0, finishReason, usage });
      expect(deltas()).toEqual([]);
      text.onEvent!({ type: 'turn_start', iteration: 0 });
      text.onEvent!({ type: 'delta', text: rest, iteration: 0 });
      text.onEvent!({ type: 'turn_end', iteration: 0, finishReason: 'stop', usage });
      const read = text.read({ role: 'assistant', content: first + rest, toolCalls: [] });
      expect(read.toolCalls.map((call) => call.name)).toEqual(['search']);
      expect(deltas()).toEqual([]);
    });
  }

  it('releases held text that is not calls when the reply ends uncut', () => {
    const { text, deltas } = reader();
    text.onEvent!({ type: 'delta', text: '<tool_call> is how I would call', iteration: 0 });
    text.onEvent!({ type: 'turn_end', iteration: 0, finishReason: 'stop', usage });
    expect(deltas()).toEqual(['<tool_call> is how I would call']);
  });
});
