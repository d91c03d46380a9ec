import type { Embedder } from '../../../../src/embeddings/embedder.js';
import type { InjectionClassifier } from '../../../../src/memory/firewall/injection-classifiers.js';
import { lexicalFeatures } from '../../../../src/memory/firewall/lexical-features.js';

/**
 * A fake embedder in a classifier's space: a text's vector lies along the classifier's weights, so
 * far that the classifier scores the text `scoreOf(text)`, its words' part (lexical-features.ts)
 * included. Calls and texts are recorded.
 */
export function scoringEmbedder(
  classifier: InjectionClassifier,
  scoreOf: (text: string) => number,
  identity: Partial<Pick<Embedder, 'id' | 'dimensions'>> = {},
) {
  const along = classifier.weights.slice(0, classifier.dimensions);
  const norm = along.reduce((sum, w) => sum + w * w, 0);
  const calls: string[][] = [];
  const embedder: Embedder = {
    id: identity.id ?? classifier.embedderId,
    dimensions: identity.dimensions ?? classifier.dimensions,
    maxInputTokens: 512,
    close: async () => {},
    async embed(texts) {
      calls.push([...texts]);
      return texts.map((text) => {
        const p = scoreOf(text);
        const words = classifier.lexicalBuckets > 0 ? lexicalFeatures(text, classifier.lexicalBuckets) : [];
        const wordsLogit = words.reduce((sum, x, i) => sum + x * classifier.weights[classifier.dimensions + i]!, 0);
        const logit = Math.log(p / (1 - p)) - classifier.bias - wordsLogit;
        return Array.from({ length: identity.dimensions ?? classifier.dimensions }, (_, j) => (logit * (along[j] ?? 0)) / norm);
      });
    },
  };
  return { embedder, calls, textsEmbedded: () => calls.flat() };
}
