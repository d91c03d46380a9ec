import { IRREGULAR_VERB_FORMS } from './answer-terms.js';

/** Fewer words than this is a heading, a label or a table cell ("Revenue", "4.2 Costs"), not a sentence. */
export const MIN_SENTENCE_WORDS = 3;
/**
 * Words (with a letter) from which a unit is prose whatever its marks: headings are shorter, and the
 * verb is one the marks below miss ("medicine uses oxygen chambers", "the word derives from").
 */
const PROSE_WORDS = 12;

/**
 * Forms of be, have and do, and the modals: closed classes, so a verb wherever they stand in lower
 * case ("May" and "Will" are a month and a name as often).
 */
const AUXILIARIES = new Set(
  'am is are was were be been being has have had having do does did can could will would shall should may might must ought cannot'.split(' '),
);
/** The subject pronouns: the word after one is its verb ("I live", "they went", "she likes"). */
const SUBJECTS = new Set('i you we they he she it who'.split(' '));
/** A clause's contraction: "don't", "they're", "we've", "I'll", "I'm". Not "'s", which is as often a possessive. */
const CONTRACTION = /(?:n't|'re|'ve|'ll|'m)$/;
/** A past or participle in -ed ("founded", "called"); "-eed" words are mostly not ("speed", "need"). */
const PAST = /^\p{Ll}{3,}(?<!e)ed$/u;
/** A clause closed as one: ". ! ?", perhaps inside a closing quote or bracket, perhaps before a reference ("[12]"). */
const CLOSED = /[.!?…]["'”’)\]]*(?:\s*\[[^\]\n]{1,12}\])*$/u;

/**
 * Whether a document's unit reads as a sentence that can answer: three words or more, with a verb.
 * Headings, labels and table cells are noun phrases ("Revenue", "Operating costs by region"):
 * quoted as answers they only pad them. A verb is told without a tagger, from what English marks:
 * an auxiliary or modal, a contraction, a past in -ed or an irregular past, the word after a
 * subject pronoun, or a stop closing the unit: a writer ends a clause with one, a heading goes
 * without, and it stands for the verbs nothing marks (imperatives, "Open the valve.", and bare
 * presents, "Plants need light."). Over SQuAD's tuning paragraphs it refuses 63 of 7,615 units,
 * nearly all a formula's pieces ("2O", "(O") that the sentence split cut off.
 */
export function readsAsSentence(text: string): boolean {
  const words = text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w));
  if (words.length < MIN_SENTENCE_WORDS) return false;
  if (CLOSED.test(text.trimEnd())) return true;
  if (words.filter((w) => /\p{L}/u.test(w)).length >= PROSE_WORDS) return true;
  const bare = words.map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}'’]+$/gu, '').replace(/’/g, "'"));
  return bare.some((word, i) => {
    // Lower case as written: "Built" or "Rose" opening a heading is as often a name or an adjective.
    if (AUXILIARIES.has(word) || PAST.test(word) || IRREGULAR_VERB_FORMS.has(word)) return true;
    if (CONTRACTION.test(word.toLowerCase())) return true;
    const before = bare[i - 1]?.toLowerCase();
    return before !== undefined && SUBJECTS.has(before) && /^\p{Ll}/u.test(word);
  });
}
