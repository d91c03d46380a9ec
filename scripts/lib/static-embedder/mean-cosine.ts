import type { StaticEmbedder } from '../../../src/embeddings/static-embedder.js';

/** Mean cosine between the student's vectors and the teacher's (both unit length) over `sentences`. */
export function meanCosine(student: StaticEmbedder, sentences: string[], teacherOf: (sentence: string, out: Float32Array) => void): number {
  if (sentences.length === 0) return Number.NaN;
  const teacher = new Float32Array(student.dimensions);
  let sum = 0;
  for (const sentence of sentences) {
    teacherOf(sentence, teacher);
    const vector = student.embedOne(sentence);
    let dot = 0;
    for (let j = 0; j < vector.length; j++) dot += vector[j]! * teacher[j]!;
    sum += dot;
  }
  return sum / sentences.length;
}
