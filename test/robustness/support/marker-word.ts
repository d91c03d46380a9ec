/** A word of letters only, distinct per `i` (below 676), that no stemmer folds into another one. */
export const markerWord = (i: number) => `zx${String.fromCharCode(97 + Math.floor(i / 26))}${String.fromCharCode(97 + (i % 26))}q`;
