import type { Embedder } from '../../embeddings/embedder.js';
import type { MemoryActor } from '../memory-types.js';
import { type QuarantineReason, describesUser, ruleReasons } from './firewall-rules.js';
import { BENIGN_ANCHORS, INJECTION_PATTERNS } from './injection-patterns.js';

/** `model`: the model's and extraction's writes are screened; `all`: the API's too; `off`: none. */
export const MEMORY_FIREWALL_MODES = ['model', 'all', 'off'] as const;
export type MemoryFirewallMode = (typeof MEMORY_FIREWALL_MODES)[number];

export interface FirewallVerdict {
  status: 'active' | 'quarantined';
  reasons: QuarantineReason[];
  /** Nearest injection pattern's cosine minus the nearest benign anchor's; null without the tuned embedder. */
  similarity: number | null;
}

/**
 * The similarity margin above which a memory reads as an injection, tuned on the bundled embedder
 * (scripts/bench/memory-firewall.ts; figures in docs/benchmarks/memory-firewall.md). Other
 * embedders' spaces are not tuned: there the rules screen alone.
 */
export const SIMILARITY_THRESHOLD = 0.205;
/** The bundled embedder's id (`BUNDLED_USE_ID`), named here so that the screen does not load its module. */
export const TUNED_EMBEDDER_ID = 'bundled:use-lite';

export interface MemoryFirewall {
  readonly mode: MemoryFirewallMode;
  /** Whether a write by `actor` is screened; `untrusted` marks the API writes a model makes (MCP). */
  screens(actor: MemoryActor, untrusted?: boolean): boolean;
  screen(texts: readonly string[]): Promise<FirewallVerdict[]>;
}

export interface MemoryFirewallOptions {
  mode: MemoryFirewallMode;
  embedder?: Embedder;
  threshold?: number;
  /** Called once per quarantined text, with its reasons (the metrics counter). */
  onQuarantined?: (reasons: readonly QuarantineReason[]) => void;
}

const dot = (a: readonly number[], b: readonly number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
const nearest = (vector: readonly number[], to: readonly number[][]) => Math.max(...to.map((v) => dot(vector, v)));

/** The similarity margins of texts: nearest injection pattern minus nearest benign anchor. */
export async function similarityMargins(embedder: Embedder, texts: readonly string[]): Promise<number[]> {
  if (texts.length === 0) return [];
  const vectors = await embedder.embed([...INJECTION_PATTERNS, ...BENIGN_ANCHORS, ...texts]);
  const patterns = vectors.slice(0, INJECTION_PATTERNS.length);
  const anchors = vectors.slice(INJECTION_PATTERNS.length, INJECTION_PATTERNS.length + BENIGN_ANCHORS.length);
  return vectors.slice(INJECTION_PATTERNS.length + BENIGN_ANCHORS.length).map((v) => nearest(v, patterns) - nearest(v, anchors));
}

/** The rules' reasons, and the similarity's when its margin reaches the threshold on a text that is not about the user. */
export function screenReasons(text: string, similarity: number | null, threshold = SIMILARITY_THRESHOLD): QuarantineReason[] {
  const reasons = ruleReasons(text);
  if (similarity !== null && similarity >= threshold && !describesUser(text)) reasons.push('similar_to_injection');
  return reasons;
}

export function createMemoryFirewall(options: MemoryFirewallOptions): MemoryFirewall {
  const threshold = options.threshold ?? SIMILARITY_THRESHOLD;
  const embedder = options.embedder?.id === TUNED_EMBEDDER_ID ? options.embedder : undefined;
  // The patterns are embedded once, on first use, and kept.
  let references: Promise<{ patterns: number[][]; anchors: number[][] }> | undefined;
  const referencesOf = (e: Embedder) => {
    references ??= e.embed([...INJECTION_PATTERNS, ...BENIGN_ANCHORS]).then((v) => ({
      patterns: v.slice(0, INJECTION_PATTERNS.length),
      anchors: v.slice(INJECTION_PATTERNS.length),
    }));
    references.catch(() => {
      references = undefined;
    });
    return references;
  };

  async function screen(texts: readonly string[]): Promise<FirewallVerdict[]> {
    let margins: (number | null)[] = texts.map(() => null);
    if (embedder && texts.length > 0) {
      const { patterns, anchors } = await referencesOf(embedder);
      const vectors = await embedder.embed([...texts]);
      margins = vectors.map((v) => nearest(v, patterns) - nearest(v, anchors));
    }
    return texts.map((text, i) => {
      const similarity = margins[i] ?? null;
      const reasons = screenReasons(text, similarity, threshold);
      if (reasons.length > 0) options.onQuarantined?.(reasons);
      return { status: reasons.length > 0 ? 'quarantined' : 'active', reasons, similarity };
    });
  }

  return {
    mode: options.mode,
    screens: (actor, untrusted = false) => {
      if (options.mode === 'off' || actor.type === 'system') return false;
      return options.mode === 'all' || untrusted || actor.type === 'tool' || actor.type === 'extraction';
    },
    screen,
  };
}
