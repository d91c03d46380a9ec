import type { Embedder } from '../embeddings/embedder.js';
import type { MemoryActor } from './memory-types.js';
import type { QuarantineReason } from './quarantine-reasons.js';

/**
 * What the memory store asks of a screen on its writes; the firewall (memory/firewall/) is one.
 * Declared here so the store's types point down to nothing of the firewall's.
 */
export interface MemoryWriteScreen {
  /** Whether a write by `actor` is screened; `untrusted` marks the API writes a model makes (MCP). */
  screens(actor: MemoryActor, untrusted?: boolean): boolean;
  /**
   * `embedder`: the writer's, when it stores the texts' vectors: a screen that embeds them does so
   * with it, so that the writer can keep those vectors rather than run the model again.
   */
  screen(texts: readonly string[], embedder?: Embedder): Promise<FirewallVerdict[]>;
}

export interface FirewallVerdict {
  status: 'active' | 'quarantined';
  reasons: QuarantineReason[];
  /** The classifier's probability that the text is an injection; null without the embedder it was trained on. */
  injectionScore: number | null;
  /** What the second opinion said, when it was asked (a borderline text) and answered. */
  secondOpinion?: 'injection' | 'fact';
}

/** The verdict on a write nothing screens. */
export const ACTIVE: FirewallVerdict = Object.freeze({ status: 'active', reasons: [], injectionScore: null });

/** The columns a verdict sets on the memory written. */
export const verdictFields = (verdict: FirewallVerdict) => ({ status: verdict.status, quarantineReasons: [...verdict.reasons] });
