import { describe, expect, it } from 'vitest';
import { parseTextToolCalls } from '../../src/llm/text-tool-calls.js';
import { SUPER_LINEAR, describeGrowth, timedGrowth } from '../support/growth-ratio.js';

const offered = new Set(['weather', 'search_memories', 'get_time']);
const isOffered = (name: string) => offered.has(name);
const parse = (text: string) => parseTextToolCalls(text, isOffered);
const weather = (city: string) => ({ name: 'weather', arguments: JSON.stringify({ city }) });

describe('tool calls written as text', () => {
  describe('Hermes / Qwen: <tool_call>', () => {
    it('reads one call, whitespace around it', () => {
      expect(parse('\n <tool_call>\n{"name": "weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n')).toEqual([weather('Oslo')]);
    });

    it('reads several, in the order written', () => {
      const text =
        '<tool_call>{"name":"weather","arguments":{"city":"Oslo"}}</tool_call>\n<tool_call>{"name":"weather","arguments":{"city":"Rome"}}</tool_call>';
      expect(parse(text)).toEqual([weather('Oslo'), weather('Rome')]);
    });

    it('takes arguments encoded as a JSON string, and none as {}', () => {
      expect(parse('<tool_call>{"name":"weather","arguments":"{\\"city\\":\\"Oslo\\"}"}</tool_call>')).toEqual([weather('Oslo')]);
      expect(parse('<tool_call>{"name":"get_time"}</tool_call>')).toEqual([{ name: 'get_time', arguments: '{}' }]);
    });

    it.each([
      ['bad JSON', '<tool_call>{"name":"weather","arguments":{"city":}</tool_call>'],
      ['an unclosed block', '<tool_call>{"name":"weather","arguments":{"city":"Oslo"}}'],
      ['a name not offered', '<tool_call>{"name":"launch_missiles","arguments":{}}</tool_call>'],
      [
        'one good call beside one not offered',
        '<tool_call>{"name":"weather","arguments":{"city":"Oslo"}}</tool_call><tool_call>{"name":"nope","arguments":{}}</tool_call>',
      ],
      ['text after the calls', '<tool_call>{"name":"weather","arguments":{"city":"Oslo"}}</tool_call> Let me check.'],
      ['text before the calls', 'Sure! <tool_call>{"name":"weather","arguments":{"city":"Oslo"}}</tool_call>'],
      ['arguments that are not an object', '<tool_call>{"name":"weather","arguments":[1,2]}</tool_call>'],
      ['an array inside the tag', '<tool_call>[{"name":"weather","arguments":{}}]</tool_call>'],
      ['no name', '<tool_call>{"arguments":{"city":"Oslo"}}</tool_call>'],
      ['both arguments and parameters', '<tool_call>{"name":"weather","arguments":{},"parameters":{}}</tool_call>'],
    ])('leaves %s as text', (_case, text) => {
      expect(parse(text)).toBeUndefined();
    });
  });

  describe('Mistral: [TOOL_CALLS]', () => {
    it('reads an array of calls', () => {
      const text = '[TOOL_CALLS][{"name":"weather","arguments":{"city":"Oslo"}},{"name":"get_time","arguments":{}}]';
      expect(parse(text)).toEqual([weather('Oslo'), { name: 'get_time', arguments: '{}' }]);
    });

    it('reads a single object too', () => {
      expect(parse(' [TOOL_CALLS] {"name":"weather","arguments":{"city":"Oslo"}}')).toEqual([weather('Oslo')]);
    });

    it.each([
      ['bad JSON', '[TOOL_CALLS][{"name":"weather","arguments":{"city":"Oslo"}]'],
      ['an empty list', '[TOOL_CALLS][]'],
      ['text after the array', '[TOOL_CALLS][{"name":"weather","arguments":{"city":"Oslo"}}] done'],
      ['a name not offered', '[TOOL_CALLS][{"name":"rm_rf","arguments":{}}]'],
    ])('leaves %s as text', (_case, text) => {
      expect(parse(text)).toBeUndefined();
    });
  });

  describe('Llama 3.x: <function=name>', () => {
    it('reads one or several calls', () => {
      expect(parse('<function=weather>{"city": "Oslo"}</function>')).toEqual([weather('Oslo')]);
      expect(parse('<function=weather>{"city":"Oslo"}</function>\n<function=get_time></function>')).toEqual([
        weather('Oslo'),
        { name: 'get_time', arguments: '{}' },
      ]);
    });

    it.each([
      ['bad JSON', '<function=weather>{"city": Oslo}</function>'],
      ['no closing tag', '<function=weather>{"city":"Oslo"}'],
      ['an invalid name', '<function=wea ther>{"city":"Oslo"}</function>'],
      ['a name not offered', '<function=shell>{"cmd":"ls"}</function>'],
      ['text around the call', '<function=weather>{"city":"Oslo"}</function> and then'],
    ])('leaves %s as text', (_case, text) => {
      expect(parse(text)).toBeUndefined();
    });
  });

  describe('a fenced JSON block', () => {
    it('reads an object or an array, labelled json or not', () => {
      expect(parse('```json\n{"name":"weather","arguments":{"city":"Oslo"}}\n```')).toEqual([weather('Oslo')]);
      expect(parse('```\n[{"name":"weather","arguments":{"city":"Oslo"}},{"name":"weather","arguments":{"city":"Rome"}}]\n```')).toEqual([
        weather('Oslo'),
        weather('Rome'),
      ]);
    });

    it('reads Llama\'s "parameters" as the arguments', () => {
      expect(parse('```json\n{"name":"weather","parameters":{"city":"Oslo"}}\n```')).toEqual([weather('Oslo')]);
    });

    it.each([
      ['another language', '```python\n{"name":"weather","arguments":{"city":"Oslo"}}\n```'],
      ['JSON that is not a call', '```json\n{"city":"Oslo"}\n```'],
      ['text before the block', 'Here:\n```json\n{"name":"weather","arguments":{"city":"Oslo"}}\n```'],
      ['text after the block', '```json\n{"name":"weather","arguments":{"city":"Oslo"}}\n```\nDone.'],
      ['two blocks', '```json\n{"name":"weather","arguments":{"city":"Oslo"}}\n```\n```json\n{"name":"weather","arguments":{"city":"Rome"}}\n```'],
      ['an unclosed fence', '```json\n{"name":"weather","arguments":{"city":"Oslo"}}'],
      ['a bare JSON object (no fence)', '{"name":"weather","arguments":{"city":"Oslo"}}'],
    ])('leaves %s as text', (_case, text) => {
      expect(parse(text)).toBeUndefined();
    });
  });

  it('leaves an ordinary answer, and an empty one, as text', () => {
    expect(parse('The weather in Oslo is mild.')).toBeUndefined();
    expect(parse('   ')).toBeUndefined();
  });

  it('survives nesting deep enough to overflow a recursive parser', () => {
    expect(parse(`[TOOL_CALLS]${'['.repeat(200_000)}`)).toBeUndefined();
    expect(parse(`<tool_call>${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}</tool_call>`)).toBeUndefined();
  });
});

/** Long replies a model (or whoever steers it) could write to make the parser read the same text again and again. */
const ADVERSARIAL: [string, (n: number) => string][] = [
  ['openers without a closer', (n) => '<tool_call>'.repeat(n)],
  ['many good Hermes calls', (n) => '<tool_call>{"name":"weather","arguments":{"city":"Oslo"}}</tool_call>'.repeat(n / 4)],
  [
    'many good calls, the last one unknown',
    (n) => `${'<tool_call>{"name":"weather","arguments":{}}</tool_call>'.repeat(n / 4)}<tool_call>{"name":"x"}</tool_call>`,
  ],
  ['Llama openers without a name end', (n) => `<function=${'a'.repeat(n * 10)}`],
  ['Llama calls, the last unclosed', (n) => `${'<function=get_time>{}</function>'.repeat(n / 2)}<function=get_time>{}`],
  ['a fence full of fences', (n) => `\`\`\`json\n${'```'.repeat(n * 3)}`],
  ['Mistral with a long array', (n) => `[TOOL_CALLS][${'{"name":"get_time","arguments":{}},'.repeat(n / 2)}{"name":"get_time"}]`],
  ['whitespace between calls', (n) => `<tool_call>{"name":"get_time"}</tool_call>${' \n'.repeat(n * 5)}<tool_call>{"name":"get_time"}</tool_call>`],
];

describe('text tool call parsing is linear in the reply', () => {
  it.each(ADVERSARIAL)('reads %s in linear time', (_name, make) => {
    const growth = timedGrowth(make, parse, { base: 4000 });
    expect(growth.perDoubling, describeGrowth(growth)).toBeLessThan(SUPER_LINEAR);
  });
});
