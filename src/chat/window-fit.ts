import { type CompactionSettings, compactionLimit } from '../compaction/compaction-config.js';

/** Memories, and documents, a turn recalls when neither the request nor the agent says. */
export const CHAT_TOP_K_DEFAULT = 5;

/**
 * A source as a prompt carries it, in estimated tokens: a document chunk is cut to the embedder's
 * 128-token window (about 170 estimated, the estimate erring high), a memory is a sentence or two,
 * and each comes wrapped in its `<source>` tag.
 */
export const TYPICAL_SOURCE_TOKENS = 150;
/** Below this window the sources a turn recalls are counted against it. */
export const SMALL_WINDOW_TOKENS = 8_192;
/** The share of a small window's limit the recalled sources (or one search's results) may take. */
const SOURCES_SHARE = 0.15;
/** The share of the limit a reopened stretch of turns may take (recall_turns). */
const RECALL_SHARE = 0.25;

/**
 * How many sources a turn recalls: `topK`, but at a small window no more than its share affords,
 * so that the turn's own tool results are not what compaction has to cut. At 4k that is 2.
 */
export function sourcesFor(settings: CompactionSettings, topK: number): number {
  if (settings.contextWindow >= SMALL_WINDOW_TOKENS) return topK;
  const affordable = Math.floor((compactionLimit(settings) * SOURCES_SHARE) / TYPICAL_SOURCE_TOKENS);
  return Math.max(1, Math.min(topK, affordable));
}

/** The most tokens recall_turns returns at once. */
export function recallTurnsBudget(settings: CompactionSettings): number {
  return Math.max(200, Math.floor(compactionLimit(settings) * RECALL_SHARE));
}
