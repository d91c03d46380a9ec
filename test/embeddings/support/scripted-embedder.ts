import type { Embedder } from '../../../src/embeddings/embedder.js';

/**
 * A model-free embedder for exercising the pool from inside worker threads. Special texts script
 * failures: 'throw' rejects the call, 'crash' kills the worker with an uncaught exception, and
 * each 'slow' takes 300 ms; 'clock' is embedded as [Date.now(), 0, …], when the worker reached
 * it, and 'size' as [the number of texts in the model call, 0, …]. `failInit` makes the factory
 * itself fail.
 */
export interface ScriptedEmbedderOptions {
  dimensions?: number;
  failInit?: boolean;
}

export async function createScriptedEmbedder(options: ScriptedEmbedderOptions = {}): Promise<Embedder> {
  if (options.failInit) throw new Error('scripted init failure');
  const dimensions = options.dimensions ?? 4;
  return {
    id: `test:scripted-${dimensions}`,
    dimensions,
    maxInputTokens: 64,
    async embed(texts: string[]): Promise<number[][]> {
      if (texts.includes('throw')) throw new Error('scripted embed failure');
      if (texts.includes('crash')) {
        setTimeout(() => {
          throw new Error('scripted worker crash');
        });
        return new Promise(() => {});
      }
      for (const text of texts) if (text === 'slow') await new Promise((resolve) => setTimeout(resolve, 300));
      return texts.map((text) => {
        if (text === 'clock') return [Date.now(), ...Array.from({ length: dimensions - 1 }, () => 0)];
        if (text === 'size') return [texts.length, ...Array.from({ length: dimensions - 1 }, () => 0)];
        // Depends on the text only, so any worker gives the same answer.
        const v = Array.from({ length: dimensions }, (_, i) => Math.sin(text.length + i + [...text].reduce((s, c) => s + c.charCodeAt(0), 0)));
        const norm = Math.hypot(...v);
        return v.map((x) => x / norm);
      });
    },
    async close() {},
  };
}
