import { foldAccents } from './answer-terms.js';

/** What a question asks for, read from its first words; `other` gives no sentence a head start. */
export type AnswerType = 'date' | 'number' | 'name' | 'place' | 'other';

export function answerTypeOf(question: string): AnswerType {
  const q = question.toLowerCase();
  if (/\b(?:when|what (?:year|date|day|month|century|decade|time|period|era)|which (?:year|date|day|month|century|decade))\b/.test(q)) return 'date';
  if (/\b(?:how (?:many|much|long|far|old|large|big|high|tall|often)|what (?:percentage|percent|proportion|number|amount|fraction))\b/.test(q)) return 'number';
  if (/\b(?:who|whom|whose)\b/.test(q)) return 'name';
  if (/\bwhere\b/.test(q)) return 'place';
  return 'other';
}

const MONTHS = 'january|february|march|april|may|june|july|august|september|october|november|december';
const DATE = new RegExp(`\\b(?:1[0-9]{3}|20[0-9]{2})s?\\b|\\b(?:${MONTHS})\\b|\\bcentur(?:y|ies)\\b|\\b(?:bc|ad|bce|ce)\\b|\\b[0-9]{1,2}(?:st|nd|rd|th)\\b`, 'i');
const NUMBER = /\b[0-9][0-9,.]*\b|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundreds?|thousands?|millions?|billions?|dozens?|half|percent)\b/i;
/** A capitalised word not at the start of the sentence (where every word is capitalised). */
const CAPITALISED = /(?<=[\s(,;"'])\p{Lu}[\p{L}'-]+/gu;

/**
 * Whether the sentence holds something of the wanted kind that the question does not already
 * name: a year for "when", a number for "how many", a name for "who". A name the question
 * itself says is what the sentence is about, not the answer.
 */
export function hasAnswerOfType(type: AnswerType, sentence: string, question: string): boolean {
  if (type === 'other') return false;
  const asked = new Set((foldAccents(question).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []));
  const fresh = (match: string) => !match.toLowerCase().split(/[^\p{L}\p{N}]+/u).every((w) => w === '' || asked.has(w));
  const folded = foldAccents(sentence);
  if (type === 'date') return matches(folded, DATE).some(fresh);
  if (type === 'number') return matches(folded, NUMBER).some(fresh);
  return (folded.match(CAPITALISED) ?? []).some(fresh);
}

function matches(text: string, pattern: RegExp): string[] {
  return text.match(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`)) ?? [];
}
