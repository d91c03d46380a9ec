/** Shortest and longest sentence kept, in characters: a word or two is still a query; past the teacher's 128 tokens it sees no more. */
const MIN_CHARACTERS = 8;
const MAX_CHARACTERS = 600;

/**
 * Splits prose into sentences at a full stop, question or exclamation mark followed by space and
 * a capital, digit or quote, and at line breaks; whitespace collapsed, lengths bounded.
 */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\n+/)) {
    for (const part of line.split(/(?<=[.!?]["')\]]?)\s+(?=["'([]?[A-Z0-9])/)) {
      const sentence = part.replace(/\s+/g, ' ').trim();
      if (sentence.length >= MIN_CHARACTERS && sentence.length <= MAX_CHARACTERS && /\p{L}/u.test(sentence)) out.push(sentence);
    }
  }
  return out;
}
