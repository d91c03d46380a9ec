import type { Embedder } from '../../embeddings/embedder.js';
import { type InjectionClassifierWeights, logisticModel } from './injection-classifier.js';
import { INJECTION_CLASSIFIER as BUNDLED_USE_CLASSIFIER } from './injection-classifier-weights.js';
import { INJECTION_CLASSIFIER as STATIC_CLASSIFIER } from './injection-classifier-weights-static.js';
import { INJECTION_CLASSIFIER as STATIC_V2_CLASSIFIER } from './injection-classifier-weights-static-v2.js';
import { lexicalFeatures } from './lexical-features.js';

/** A trained classifier, ready to score texts by the vectors of the embedder it was trained on. */
export interface InjectionClassifier extends InjectionClassifierWeights {
  /** The embedder's dimensions its weights read (the rest are the words' buckets). */
  readonly dimensions: number;
  /** The probability that a text is an injection, from its vector by `embedderId`'s model and its words. */
  score(vector: readonly number[], text: string): number;
  /** Each text's score; embeds them with `embedder`, whose id must be `embedderId`. */
  scores(embedder: Embedder, texts: readonly string[]): Promise<number[]>;
}

function classifierOf(trained: InjectionClassifierWeights): InjectionClassifier {
  const model = logisticModel(trained.weights, trained.bias);
  const dimensions = trained.weights.length - trained.lexicalBuckets;
  const score = (vector: readonly number[], text: string) => {
    // A vector of another length is of another space, whatever its embedder calls itself.
    if (vector.length !== dimensions)
      throw new RangeError(`the injection classifier of ${trained.embedderId} reads ${dimensions} dimensions, not ${vector.length}`);
    return model.score(trained.lexicalBuckets > 0 ? [...vector, ...lexicalFeatures(text, trained.lexicalBuckets)] : vector);
  };
  return {
    ...trained,
    dimensions,
    score,
    async scores(embedder, texts) {
      if (embedder.id !== trained.embedderId) throw new RangeError(`the injection classifier of ${trained.embedderId} cannot read ${embedder.id}'s vectors`);
      if (texts.length === 0) return [];
      return (await embedder.embed([...texts])).map((vector, i) => score(vector, texts[i]!));
    },
  };
}

/** The classifiers trained so far, by the id of their embedder: the bundled USE lite, and both versions of the static model distilled from it. */
export const INJECTION_CLASSIFIERS: ReadonlyMap<string, InjectionClassifier> = new Map(
  [BUNDLED_USE_CLASSIFIER, STATIC_CLASSIFIER, STATIC_V2_CLASSIFIER].map((trained) => [trained.embedderId, classifierOf(trained)]),
);

/** The classifier trained in `embedder`'s vector space; undefined for any other (the rules screen alone there). */
export function injectionClassifierFor(embedder: Pick<Embedder, 'id' | 'dimensions'>): InjectionClassifier | undefined {
  const classifier = INJECTION_CLASSIFIERS.get(embedder.id);
  return classifier?.dimensions === embedder.dimensions ? classifier : undefined;
}
