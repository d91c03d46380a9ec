/**
 * A classifier as scripts/train-firewall-classifier.ts writes it, one generated file per embedder
 * (`npm run train:firewall`): its weights read that embedder's vectors only, so `embedderId` names
 * the vector space they were fitted in, and the choices cross-validation made there.
 */
export interface InjectionClassifierWeights {
  readonly embedderId: string;
  /** For an embedder whose model is a file of this repository (the static one): that file's sha256, which the weights were fitted on. */
  readonly embedderSha256?: string;
  readonly trainedOn: string;
  readonly lambda: number;
  /** Hashed word buckets after the vector's dimensions (lexical-features.ts); 0: the vector alone. */
  readonly lexicalBuckets: number;
  /** The score from which a text reads as an injection, chosen by cross-validation with the rest. */
  readonly threshold: number;
  /** Whether the score counts for a text about the user (`describesUser`). */
  readonly screensAboutUser: boolean;
  /** Whether the score counts for a text that does not read as English (`readsAsEnglish`). */
  readonly screensOtherLanguages: boolean;
  readonly bias: number;
  readonly weights: readonly number[];
}

/** A logistic regression over a text's features (an embedder's vector, its words hashed): the probability that it is an injection. */
export interface LogisticModel {
  weights: readonly number[];
  bias: number;
  score(features: readonly number[]): number;
}

export function logisticModel(weights: readonly number[], bias: number): LogisticModel {
  return {
    weights,
    bias,
    score: (vector) => 1 / (1 + Math.exp(-vector.reduce((sum, x, i) => sum + x * (weights[i] ?? 0), bias))),
  };
}

/**
 * Fits by full-batch gradient descent with L2 regularization; each class weighs half, so that a
 * set with more facts than injections does not tilt the model toward "fact". A text's hashed words
 * fill few of their buckets: each vector is walked by its non-zero features only, in their order,
 * which leaves every sum as the dense walk makes it.
 */
export function trainLogistic(vectors: readonly (readonly number[])[], labels: readonly number[], lambda: number, epochs = 400, rate = 0.5): LogisticModel {
  const dimensions = vectors[0]?.length ?? 0;
  const weights = new Float64Array(dimensions);
  let bias = 0;
  const positives = labels.filter((y) => y === 1).length;
  const classWeight = (y: number) => 0.5 / (y === 1 ? positives : labels.length - positives);
  const sparse = vectors.map((vector) => {
    const at: number[] = [];
    for (let j = 0; j < dimensions; j++) if (vector[j] !== 0) at.push(j);
    return { at: Int32Array.from(at), values: Float64Array.from(at, (j) => vector[j]!) };
  });
  const gradient = new Float64Array(dimensions);
  for (let epoch = 0; epoch < epochs; epoch++) {
    gradient.fill(0);
    let biasGradient = 0;
    sparse.forEach(({ at, values }, i) => {
      let sum = bias;
      for (let k = 0; k < at.length; k++) sum += values[k]! * weights[at[k]!]!;
      const g = (1 / (1 + Math.exp(-sum)) - labels[i]!) * classWeight(labels[i]!);
      for (let k = 0; k < at.length; k++) gradient[at[k]!]! += g * values[k]!;
      biasGradient += g;
    });
    for (let j = 0; j < dimensions; j++) weights[j]! -= rate * (gradient[j]! + lambda * weights[j]!);
    bias -= rate * biasGradient;
  }
  return logisticModel(Array.from(weights), bias);
}
