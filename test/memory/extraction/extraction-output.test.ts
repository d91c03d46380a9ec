import { describe, expect, it } from 'vitest';
import { MalformedExtractionOutput, parseFacts } from '../../../src/memory/extraction/extraction-output.js';

describe('parseFacts', () => {
  it('reads each fact with its quote and valid time', () => {
    const reply = JSON.stringify({
      facts: [
        { content: 'The user worked at Acme until June 2022.', tags: ['Work'], quote: 'I worked at Acme until June 2022', validUntil: '2022-06-30' },
        { content: 'The user has lived in Porto since 2019.', quote: 'since 2019 in Porto', validFrom: '2019-01-01' },
        'The user likes tea.',
      ],
    });
    expect(parseFacts(reply)).toEqual({
      dropped: 0,
      facts: [
        {
          content: 'The user worked at Acme until June 2022.',
          tags: ['work'],
          quote: 'I worked at Acme until June 2022',
          validUntil: new Date('2022-06-30T00:00:00Z'),
        },
        { content: 'The user has lived in Porto since 2019.', tags: [], quote: 'since 2019 in Porto', validFrom: new Date('2019-01-01T00:00:00Z') },
        { content: 'The user likes tea.', tags: [] },
      ],
    });
  });

  it('drops a bad quote or date, not its fact; an end before the start drops both bounds', () => {
    const reply = JSON.stringify({
      facts: [
        { content: 'The user owns a boat.', quote: 42, validFrom: 'last summer', validUntil: '2022-02-30' },
        { content: 'The user lived in Oslo.', quote: '   ', validFrom: '2022-01-01', validUntil: '2020-01-01' },
      ],
    });
    expect(parseFacts(reply)).toEqual({
      dropped: 0,
      facts: [
        { content: 'The user owns a boat.', tags: [] },
        { content: 'The user lived in Oslo.', tags: [] },
      ],
    });
  });

  it("gives the quote back in the user's characters: the model read the conversation escaped", () => {
    const { facts } = parseFacts('{"facts":[{"content":"The user loves R&B.","quote":"I &lt;3 R&amp;B &gt; pop"}]}');
    expect(facts[0]!.quote).toBe('I <3 R&B > pop');
  });

  it('refuses a reply without a facts array as a whole', () => {
    expect(() => parseFacts('Sure! The user likes tea.')).toThrow(MalformedExtractionOutput);
    expect(() => parseFacts('{"fact": []}')).toThrow(MalformedExtractionOutput);
  });
});
