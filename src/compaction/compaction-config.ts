import type { ModelCompaction } from '../config/compaction-models.js';
import { ConfigError } from '../config/config-error.js';

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

/** The variables compaction reads, as config.ts parses them (CONTEXT_* and COMPACTION_*). */
export interface CompactionEnv {
  CONTEXT_WINDOW_TOKENS: number;
  CONTEXT_OUTPUT_RESERVE_TOKENS: number;
  COMPACTION_TRIGGER_SHARE: number;
  COMPACTION_RECENT_MESSAGES: number;
  COMPACTION_MODELS: ReadonlyMap<string, ModelCompaction>;
}

/** The deployment's settings (CONTEXT_* and COMPACTION_*), with the model's COMPACTION_MODELS entry on top. */
export function compactionSettingsFor(env: CompactionEnv, model: string | undefined): CompactionSettings {
  const own = model === undefined ? undefined : env.COMPACTION_MODELS.get(model);
  return {
    contextWindow: own?.contextWindow ?? env.CONTEXT_WINDOW_TOKENS,
    outputReserve: own?.outputReserve ?? env.CONTEXT_OUTPUT_RESERVE_TOKENS,
    triggerShare: own?.triggerShare ?? env.COMPACTION_TRIGGER_SHARE,
    recentMessages: own?.recentMessages ?? env.COMPACTION_RECENT_MESSAGES,
  };
}

// Below this, the system prompt and tool definitions alone fill the window.
const MIN_USABLE_TOKENS = 256;

/**
 * Refuses settings that leave no room for a prompt, naming the variables to fix: checked at start,
 * for the deployment and for every model listed, since the reserve and window may come from either.
 */
export function assertCompactionConfig(env: CompactionEnv): void {
  const check = (settings: CompactionSettings, variables: string[], label: string) => {
    const usable = settings.contextWindow - settings.outputReserve;
    if (usable < MIN_USABLE_TOKENS) {
      throw new ConfigError(
        variables,
        `Invalid configuration:\n  ${variables.join(', ')}: ${label}the context window (${settings.contextWindow}) minus the output reserve (${settings.outputReserve}) leaves ${usable} tokens; at least ${MIN_USABLE_TOKENS} are needed`,
      );
    }
  };
  check(compactionSettingsFor(env, undefined), ['CONTEXT_WINDOW_TOKENS', 'CONTEXT_OUTPUT_RESERVE_TOKENS'], '');
  for (const model of env.COMPACTION_MODELS.keys()) {
    check(compactionSettingsFor(env, model), ['COMPACTION_MODELS'], `model ${JSON.stringify(model)}: `);
  }
}
