/**
 * Scales a vector to unit length. The store ranks by cosine/inner product and assumes unit
 * vectors, so every embedder normalises even when its model (nearly) already does.
 */
export function l2Normalize(vector: ArrayLike<number>): number[] {
  let sumOfSquares = 0;
  for (let i = 0; i < vector.length; i++) sumOfSquares += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sumOfSquares);
  // A zero or non-finite vector has no direction; storing it would poison similarity scores with NaN.
  if (!(norm > 0) || !Number.isFinite(norm)) {
    throw new Error(`cannot normalise an embedding with norm ${norm}`);
  }
  const out = new Array<number>(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = vector[i]! / norm;
  return out;
}
