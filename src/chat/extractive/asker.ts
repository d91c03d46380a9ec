/** "I", "me", "my", "mine", "myself": the asker, in any case ("what do i drink"). */
const FIRST_PERSON = /\b(?:i|me|my|mine|myself)\b/gi;
/** What "I" follows as a numeral: a capitalised word past the first ("Block I", "World War I"; not "When I"). */
const NUMERAL_BEFORE = /\S\s+\p{Lu}[\p{L}\p{N}'-]*\s+$/u;

/**
 * The words a question's first person is matched as, for a turn with a user: "user alice" for
 * alice. A user's memories name them, by name or as "the user" (as extraction writes them), never
 * as "I": read as glue, the pronoun would leave "What do I drink?" without the one word it shares
 * with alice's memory, declined where "What does Alice drink?" is answered from it.
 */
export function askerWords(userId: string | null | undefined): string | undefined {
  if (!userId) return undefined;
  const name = userId.replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
  return name ? `user ${name}` : 'user';
}

/** The question with its first person replaced by `asker` (for matching words only); as asked when it has none. */
export function namingTheAsker(question: string, asker: string | undefined): string {
  if (asker === undefined) return question;
  // The words just before are enough to tell, and keep a long message's many "I"s linear.
  const numeral = (at: number) => NUMERAL_BEFORE.test(question.slice(Math.max(0, at - 64), at));
  return question.replace(FIRST_PERSON, (word: string, at: number) => (word === 'I' && numeral(at) ? word : asker));
}
