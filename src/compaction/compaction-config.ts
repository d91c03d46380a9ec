import { type Config, ConfigError } from '../config/config.js';
import type { CompactionSettings } from './compaction-settings.js';

/** The deployment's settings (CONTEXT_* and COMPACTION_*), with the model's COMPACTION_MODELS entry on top. */
export function compactionSettingsFor(config: Config, model: string | undefined): CompactionSettings {
  const own = model === undefined ? undefined : config.COMPACTION_MODELS.get(model);
  return {
    contextWindow: own?.contextWindow ?? config.CONTEXT_WINDOW_TOKENS,
    outputReserve: own?.outputReserve ?? config.CONTEXT_OUTPUT_RESERVE_TOKENS,
    triggerShare: own?.triggerShare ?? config.COMPACTION_TRIGGER_SHARE,
    recentMessages: own?.recentMessages ?? config.COMPACTION_RECENT_MESSAGES,
  };
}

// Below this, the system prompt and tool definitions alone fill the window.
const MIN_USABLE_TOKENS = 256;

/**
 * Refuses settings that leave no room for a prompt, naming the variables to fix: checked at start,
 * for the deployment and for every model listed, since the reserve and window may come from either.
 */
export function assertCompactionConfig(config: Config): void {
  const check = (settings: CompactionSettings, variables: string[], label: string) => {
    const usable = settings.contextWindow - settings.outputReserve;
    if (usable < MIN_USABLE_TOKENS) {
      throw new ConfigError(
        variables,
        `Invalid configuration:\n  ${variables.join(', ')}: ${label}the context window (${settings.contextWindow}) minus the output reserve (${settings.outputReserve}) leaves ${usable} tokens; at least ${MIN_USABLE_TOKENS} are needed`,
      );
    }
  };
  check(compactionSettingsFor(config, undefined), ['CONTEXT_WINDOW_TOKENS', 'CONTEXT_OUTPUT_RESERVE_TOKENS'], '');
  for (const model of config.COMPACTION_MODELS.keys()) {
    check(compactionSettingsFor(config, model), ['COMPACTION_MODELS'], `model ${JSON.stringify(model)}: `);
  }
}
