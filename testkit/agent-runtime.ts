import type { AgentRuntime } from '../src/chat/chat-service.js';
import { type CompactionSettings, DEFAULT_COMPACTION_SETTINGS } from '../src/compaction/compaction-config.js';
import type { LlmProvider } from '../src/llm/llm-provider.js';

/**
 * A chat's runtime with one model (none: extractive replies) for every agent, and one set of
 * compaction settings for every model: what a test that does not exercise agents' own models needs.
 */
export function fixedAgentRuntime(llm?: LlmProvider, compaction: CompactionSettings = DEFAULT_COMPACTION_SETTINGS): AgentRuntime {
  return { llmFor: () => llm, compactionFor: () => compaction };
}
