/** How much prompt a model takes, and how compaction treats it. */
export interface CompactionSettings {
  /** The model's context window, in tokens. */
  contextWindow: number;
  /** Tokens kept free for the reply. */
  outputReserve: number;
  /** Share of the usable window (window minus reserve) a prompt may fill before it is compacted. */
  triggerShare: number;
  /** Stored messages at the end of the history that compaction keeps as they are (whole turns). */
  recentMessages: number;
}

export const DEFAULT_COMPACTION_SETTINGS: CompactionSettings = {
  contextWindow: 8_192,
  outputReserve: 1_024,
  triggerShare: 0.85,
  recentMessages: 8,
};

/** The most estimated tokens a request may carry. */
export function compactionLimit(settings: CompactionSettings): number {
  return Math.floor((settings.contextWindow - settings.outputReserve) * settings.triggerShare);
}
