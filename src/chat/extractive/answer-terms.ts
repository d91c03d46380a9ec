import { stemmer } from 'stemmer';

/**
 * Words that say what kind of answer is wanted, or hold the question together, rather than what it
 * is about: a sentence sharing "year" or "many" with the question is no closer to answering it.
 */
const STOPWORDS = new Set(
  (
    'a an and are as at be been being but by can could did do does doing done for from had has have having how i if in into ' +
    'should shall may might must ' +
    'is it its me my no not of on or our so than that the their them then there these they this those to was we were what ' +
    'when where which who whom whose why will with would you your about tell know please also any some such only other ' +
    'year years name kind kinds type types sort many much'
  ).split(' '),
);

/**
 * Irregular word forms the stemmer leaves apart ("kept" and "keep", "began" and "begin"): a
 * question asks "what did they keep" of a sentence saying "they kept". Ambiguous forms ("found", "lives",
 * "left", "bound", "lay") are left out.
 */
const IRREGULAR_VERBS =
  'began:begin begun:begin became:become built:build bought:buy brought:bring caught:catch chose:choose chosen:choose ' +
  'came:come drew:draw drawn:draw drove:drive driven:drive fell:fall fallen:fall felt:feel fought:fight flew:fly flown:fly ' +
  'gave:give given:give got:get gotten:get grew:grow grown:grow held:hold kept:keep knew:know known:know led:lead ' +
  'lost:lose made:make meant:mean met:meet paid:pay ran:run said:say sold:sell sent:send shot:shoot shown:show ' +
  'sang:sing sung:sing sat:sit spoke:speak spoken:speak spent:spend stood:stand struck:strike taught:teach ' +
  'thought:think told:tell took:take taken:take understood:understand went:go gone:go won:win wrote:write written:write ' +
  'wore:wear worn:wear rose:rise risen:rise saw:see seen:see ate:eat eaten:eat broke:break broken:break hid:hide ' +
  'hidden:hide sought:seek sank:sink sunk:sink threw:throw thrown:throw withdrew:withdraw withdrawn:withdraw ' +
  'forgot:forget forgotten:forget froze:freeze frozen:freeze fed:feed dealt:deal dug:dig drank:drink bitten:bite ' +
  'bred:breed fled:flee hung:hang heard:hear lent:lend rode:ride ridden:ride rang:ring shook:shake shaken:shake ' +
  'shone:shine slept:sleep stole:steal stolen:steal stuck:stick swept:sweep swam:swim tore:tear torn:tear ' +
  'wept:weep wove:weave woven:weave';
const IRREGULAR_PLURALS = 'men:man women:woman children:child feet:foot teeth:tooth mice:mouse geese:goose wives:wife knives:knife wolves:wolf halves:half';
const pairsOf = (list: string) => list.split(' ').map((pair) => pair.split(':') as [string, string]);
const IRREGULAR = new Map([...pairsOf(IRREGULAR_VERBS), ...pairsOf(IRREGULAR_PLURALS)]);

/** The irregular pasts and participles above ("began", "kept"): verbs, bar the odd noun ("saw", "rose"). */
export const IRREGULAR_VERB_FORMS: ReadonlySet<string> = new Set(pairsOf(IRREGULAR_VERBS).map(([form]) => form));

/** "Café" and "cafe" are one word to a reader; an accent must not decide a match. */
export function foldAccents(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '');
}

/** Content words of a text, folded, lower-cased and stemmed ("drinks", "drinking" → "drink"), in order. */
export function contentTerms(text: string): string[] {
  const words =
    foldAccents(text)
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  // The stem too: "named" is as much glue as "name".
  return words.flatMap((w) => {
    if (STOPWORDS.has(w)) return [];
    const stem = termOf(w);
    return STOPWORDS.has(stem) ? [] : [stem];
  });
}

/** One folded, lower-cased word as a term: its irregular form's base, stemmed ("kept" → "keep"). */
export function termOf(word: string): string {
  return stemmer(IRREGULAR.get(word) ?? word);
}

export function queryTerms(text: string): Set<string> {
  return new Set(contentTerms(text));
}
