import { describe, expect, it } from 'vitest';
import { createThinkingSplitter, reasoningField, splitThinking } from '../../src/llm/reasoning.js';

/** Splits `text` into pieces of `size` characters and feeds them to a splitter, as a stream would. */
function streamed(text: string, size: number): { content: string; reasoning: string } {
  const splitter = createThinkingSplitter();
  let content = '';
  let reasoning = '';
  for (let i = 0; i < text.length; i += size) {
    const part = splitter.push(text.slice(i, i + size));
    content += part.content;
    reasoning += part.reasoning;
  }
  const rest = splitter.end();
  return { content: content + rest.content, reasoning: reasoning + rest.reasoning };
}

describe('reasoning kept apart from the answer', () => {
  it('splits a leading <think> block from the answer, the blank line after it dropped', () => {
    expect(splitThinking('<think>The user wants tea.</think>\n\nGreen tea [1].')).toEqual({ content: 'Green tea [1].', reasoning: 'The user wants tea.' });
    expect(splitThinking('  \n<think>x</think>Answer')).toEqual({ content: 'Answer', reasoning: 'x' });
  });

  it('leaves text without a leading block alone, a <think> later in it included', () => {
    expect(splitThinking('Tags like <think>x</think> are markup.')).toEqual({ content: 'Tags like <think>x</think> are markup.', reasoning: '' });
    expect(splitThinking('<thin')).toEqual({ content: '<thin', reasoning: '' });
    expect(splitThinking('')).toEqual({ content: '', reasoning: '' });
  });

  it('takes an unclosed block as reasoning only (the output limit cut it)', () => {
    expect(splitThinking('<think>still going')).toEqual({ content: '', reasoning: 'still going' });
  });

  it('splits the same way whatever the stream cuts the tags into', () => {
    const text = '<think>Plan: look at [1].</think>\n\nGreen tea [1].';
    for (const size of [1, 2, 3, 5, 7, 8, 100]) {
      expect(streamed(text, size), `pieces of ${size}`).toEqual({ content: 'Green tea [1].', reasoning: 'Plan: look at [1].' });
    }
  });

  it('holds back only what may still be a tag: an answer streams on', () => {
    const splitter = createThinkingSplitter();
    expect(splitter.push('<th')).toEqual({ content: '', reasoning: '' });
    expect(splitter.push('ink>abc</th')).toEqual({ content: '', reasoning: 'abc' });
    expect(splitter.push('ink>Hi')).toEqual({ content: 'Hi', reasoning: '' });
    const plain = createThinkingSplitter();
    expect(plain.push('Hello')).toEqual({ content: 'Hello', reasoning: '' });
  });

  it('reads reasoning_content and reasoning, whichever a provider sends', () => {
    expect(reasoningField({ reasoning_content: 'a' })).toBe('a');
    expect(reasoningField({ reasoning: 'b' })).toBe('b');
    expect(reasoningField({ content: 'c' })).toBeUndefined();
    expect(reasoningField({ reasoning: '' })).toBeUndefined();
    expect(reasoningField(null)).toBeUndefined();
  });
});
