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
 * set with more facts than injections does not tilt the model toward "fact".
 */
export function trainLogistic(vectors: readonly (readonly number[])[], labels: readonly number[], lambda: number, epochs = 400, rate = 0.5): LogisticModel {
  const dimensions = vectors[0]?.length ?? 0;
  const weights = new Array<number>(dimensions).fill(0);
  let bias = 0;
  const positives = labels.filter((y) => y === 1).length;
  const classWeight = (y: number) => 0.5 / (y === 1 ? positives : labels.length - positives);
  for (let epoch = 0; epoch < epochs; epoch++) {
    const gradient = new Array<number>(dimensions).fill(0);
    let biasGradient = 0;
    const model = logisticModel(weights, bias);
    vectors.forEach((vector, i) => {
      const g = (model.score(vector) - labels[i]!) * classWeight(labels[i]!);
      for (let j = 0; j < dimensions; j++) gradient[j]! += g * vector[j]!;
      biasGradient += g;
    });
    for (let j = 0; j < dimensions; j++) weights[j]! -= rate * (gradient[j]! + lambda * weights[j]!);
    bias -= rate * biasGradient;
  }
  return logisticModel([...weights], bias);
}
