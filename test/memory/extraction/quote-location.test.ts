import { describe, expect, it } from 'vitest';
import { locateQuote } from '../../../src/memory/extraction/quote-location.js';

/** A quote's offsets slice its message to its text. */
function expectSlice(message: string, quote: ReturnType<typeof locateQuote>, text: string) {
  expect(quote).toEqual({ text, start: message.indexOf(text), end: message.indexOf(text) + text.length });
  expect(message.slice(quote!.start, quote!.end)).toBe(quote!.text);
}

describe('locateQuote', () => {
  const message = 'Hi there! I worked at Acme   Corp until June 2022. Now I teach\nmaths in Porto.';

  it('takes the quote where the message has it as written', () => {
    expectSlice(
      message,
      locateQuote([message], 'The user worked at Acme.', 'I worked at Acme   Corp until June 2022.'),
      'I worked at Acme   Corp until June 2022.',
    );
  });

  it('finds it ignoring case, runs of whitespace and curly quotes, and gives the words as the user wrote them', () => {
    expectSlice(message, locateQuote([message], 'x', 'i worked at acme corp'), 'I worked at Acme   Corp');
    expectSlice(message, locateQuote([message], 'x', 'now I teach maths'), 'Now I teach\nmaths');
    const curly = 'My son’s name is Tom.';
    expectSlice(curly, locateQuote([curly], 'x', "my son's name is tom"), 'My son’s name is Tom');
  });

  it('drops the quotation marks a model wrapped the quote in', () => {
    expectSlice(message, locateQuote([message], 'x', '“Now I teach'), 'Now I teach');
    expectSlice(message, locateQuote([message], 'x', '"now i teach"'), 'Now I teach');
  });

  it('maps offsets back through characters that lengthen when lowered', () => {
    const turkish = 'İstanbul is my home. I was born there.';
    expectSlice(turkish, locateQuote([turkish], 'x', 'İstanbul is my home'.toLowerCase()), 'İstanbul is my home');
    expectSlice(turkish, locateQuote([turkish], 'x', 'MY HOME'), 'my home');
  });

  it('falls back to the sentence sharing the most terms with the fact when the quote is absent or not in the message', () => {
    expectSlice(message, locateQuote([message], 'The user teaches maths in Porto.'), 'Now I teach\nmaths in Porto.');
    expectSlice(
      message,
      locateQuote([message], 'The user worked at Acme Corp until June 2022.', 'I was employed by Acme'),
      'I worked at Acme   Corp until June 2022.',
    );
  });

  it('searches every message given, with offsets into the one it was found in', () => {
    const first = 'I have two cats.';
    const second = 'My sister Ingrid lives in Bergen.';
    expectSlice(second, locateQuote([first, second], 'x', 'sister Ingrid'), 'sister Ingrid');
    expectSlice(second, locateQuote([first, second], "The user's sister Ingrid lives in Bergen."), 'My sister Ingrid lives in Bergen.');
  });

  it('quotes nothing when no sentence shares a term with the fact, or there is nothing to quote', () => {
    expect(locateQuote([message], 'The user owns a sailboat.')).toBeUndefined();
    expect(locateQuote([message], 'The user owns a sailboat.', 'I own a sailboat')).toBeUndefined();
    expect(locateQuote([], 'The user teaches maths.', 'I teach maths')).toBeUndefined();
    expect(locateQuote([message], 'x', '  ')).toBeUndefined();
  });
});
