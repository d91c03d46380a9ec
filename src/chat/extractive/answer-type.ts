import { foldAccents } from './answer-terms.js';

/**
 * What a question asks for, read from its first words; `other` gives no sentence a head start.
 * `quantity` is a measure ("how long", "how tall": a number with a unit), `reason` a cause ("why").
 */
export type AnswerType = 'date' | 'number' | 'quantity' | 'name' | 'place' | 'reason' | 'other';

/** The question words of each kind; the one earliest in the question decides ("How old was she when…" wants an age). */
const ASKING: [RegExp, AnswerType][] = [
  [/\b(?:when|what (?:year|date|day|month|century|decade|time|period|era)|which (?:year|date|day|month|century|decade))\b/, 'date'],
  [/\bhow (?:long|far|old|large|big|high|tall|wide|deep|heavy|fast)\b/, 'quantity'],
  [/\b(?:how (?:many|much|often)|what (?:percentage|percent|proportion|number|amount|fraction))\b/, 'number'],
  [/\b(?:who|whom|whose)\b/, 'name'],
  [/\bwhere\b|\b(?:what|which) (?:city|country|state|region|place|town|area|continent|location|island|river)\b/, 'place'],
  [/\bwhy\b/, 'reason'],
];

export function answerTypeOf(question: string): AnswerType {
  const q = question.toLowerCase();
  let found: { at: number; type: AnswerType } | undefined;
  for (const [pattern, type] of ASKING) {
    const at = pattern.exec(q)?.index;
    if (at !== undefined && (found === undefined || at < found.at)) found = { at, type };
  }
  return found?.type ?? 'other';
}

const MONTHS = 'january|february|march|april|may|june|july|august|september|october|november|december';
const DATE = new RegExp(
  `\\b(?:1[0-9]{3}|20[0-9]{2})s?\\b|\\b(?:${MONTHS})\\b|\\bcentur(?:y|ies)\\b|\\b(?:bc|ad|bce|ce)\\b|\\b[0-9]{1,2}(?:st|nd|rd|th)\\b`,
  'i',
);
const NUMBER =
  /\b[0-9][0-9,.]*\b|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundreds?|thousands?|millions?|billions?|dozens?|half|percent)\b/i;
const UNITS =
  'years?|months?|weeks?|days?|hours?|minutes?|seconds?|decades?|centuries|miles?|km|kilometres?|kilometers?|metres?|meters?|m|cm|mm|feet|foot|ft|inches|in|' +
  'yards?|acres?|hectares?|square|sq|tons?|tonnes?|kg|kilograms?|pounds?|lb|lbs|mph|km/h|degrees?|°|percent|%';
/** A number followed by a unit, or an age ("aged 12", "12-year-old"). */
const MEASURE = new RegExp(
  `(?:\\b[0-9][0-9,.]*|\\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|thirty|forty|fifty|hundred|thousand|several|few))[\\s-]*(?:${UNITS})\\b|\\baged? [0-9]+`,
  'i',
);
/** Words that give a cause or purpose. */
const REASON =
  /\b(?:because|due to|owing to|so that|in order to|as a result|result of|caused|leads? to|led to|since|thus|therefore|to (?:allow|avoid|prevent|ensure|protect|reduce|increase))\b/i;
/** A capitalised word not at the start of the sentence (where every word is capitalised). */
const CAPITALISED = /(?<=[\s(,;"'])\p{Lu}[\p{L}'-]+/gu;
const CALENDAR = `${MONTHS}|monday|tuesday|wednesday|thursday|friday|saturday|sunday`.replace(/\b\w/g, (c) => c.toUpperCase());
/** A capitalised place after a preposition of place ("in Paris", "near the Rhine"); "in June" is a date. */
const PLACE = new RegExp(
  `\\b(?:in|at|near|from|to|into|across|outside|inside|within|throughout|between|north|south|east|west)\\s+(?:the\\s+)?(?!(?:${CALENDAR})\\b)\\p{Lu}[\\p{L}'-]+`,
  'gu',
);

/**
 * Whether the sentence holds something of the wanted kind that the question does not already
 * name: a year for "when", a number for "how many", a name for "who". A name the question
 * itself says is what the sentence is about, not the answer.
 */
export function hasAnswerOfType(type: AnswerType, sentence: string, question: string): boolean {
  return answersOfType(type, sentence, question).length > 0;
}

/**
 * Where the sentence has something of the wanted kind the question does not already name: the
 * character offsets of each match in the sentence (accents folded, which keeps offsets for
 * precomposed text). A cause ("why") is where its cue word is.
 */
export function answersOfType(type: AnswerType, sentence: string, question: string): { index: number; text: string }[] {
  if (type === 'other') return [];
  const asked = askedWords(question);
  const fresh = (m: { text: string }) =>
    !m.text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .every((w) => w === '' || asked.has(w) || PREPOSITION.has(w));
  const folded = foldAccents(sentence);
  if (type === 'reason') return matches(folded, REASON);
  const pattern = { date: DATE, number: NUMBER, quantity: MEASURE, place: PLACE, name: CAPITALISED }[type];
  return matches(folded, pattern).filter(fresh);
}

const PREPOSITION = new Set('in at near from to into across outside inside within throughout between north south east west the'.split(' '));

function askedWords(question: string): Set<string> {
  return new Set(
    foldAccents(question)
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [],
  );
}

function matches(text: string, pattern: RegExp): { index: number; text: string }[] {
  return [...text.matchAll(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`))].map((m) => ({ index: m.index, text: m[0] }));
}
