import { describe, expect, it } from 'vitest';
import { passageText } from '../../src/documents/passage-text.js';

describe('passageText', () => {
  it('joins overlapping chunks once and keeps offsets into the document', () => {
    const doc = 'Intro line.\n\n# Tea\n\nGreen tea is steamed. Black tea is oxidised.\n\n## Oolong\n\nOolong is in between.';
    const at = (text: string, headingPath: string[]) => {
      const start = doc.indexOf(text);
      return { text, start, end: start + text.length, headingPath };
    };
    // The second chunk repeats the end of the first (overlap); a heading line lies between the last two.
    const chunks = [at('Green tea is steamed. Black tea', ['Tea']), at('Black tea is oxidised.', ['Tea']), at('Oolong is in between.', ['Tea', 'Oolong'])];
    const passage = passageText(chunks)!;
    expect(passage.start).toBe(doc.indexOf('Green'));
    expect(passage.text.length).toBe(doc.length - passage.start);
    for (const needle of ['Green tea is steamed.', 'Black tea is oxidised.', 'Oolong is in between.']) {
      const i = passage.text.indexOf(needle);
      expect(doc.slice(passage.start + i, passage.start + i + needle.length)).toBe(needle);
    }
    // What no chunk covers (the heading line) is blank, so no sentence runs into it.
    expect(passage.text).not.toContain('#');
    expect(passage.sections).toEqual([
      { start: 0, headingPath: ['Tea'] },
      { start: doc.indexOf('Oolong is') - passage.start, headingPath: ['Tea', 'Oolong'] },
    ]);
    expect(passageText([])).toBeUndefined();
  });
});
