import { type AgentSettings, permittedTools } from '../agents/agent-config.js';
import type { CompactionSettings } from '../compaction/compaction-config.js';
import { estimateMessagesTokens, estimateToolSpecTokens } from '../compaction/token-estimate.js';
import { chatToolSpecs } from './chat-tools.js';
import { buildSystemPrompt } from './system-prompt.js';
import { CHAT_TOP_K_DEFAULT, TYPICAL_SOURCE_TOKENS, sourcesFor } from './window-fit.js';

/**
 * What the next request of a conversation would carry besides its history, for a conversation no
 * turn measured (answered without a model, or imported): this agent's system prompt and tool
 * definitions, and a question like the last one with the sources a turn recalls.
 */
export function estimatedFixedTokens(input: {
  settings: AgentSettings | null;
  compaction: CompactionSettings;
  hasKnowledge: boolean;
  lastQuestion: string;
}): number {
  const { settings, compaction, hasKnowledge } = input;
  const specs = chatToolSpecs(permittedTools(settings ?? undefined), { knowledge: hasKnowledge });
  const systemPrompt = buildSystemPrompt({ hasKnowledge, tools: new Set(specs.map((t) => t.name)), instructions: settings?.instructions });
  const recalled =
    sourcesFor(compaction, settings?.recall?.memoryTopK ?? CHAT_TOP_K_DEFAULT) +
    (hasKnowledge ? sourcesFor(compaction, settings?.recall?.knowledgeTopK ?? CHAT_TOP_K_DEFAULT) : 0);
  return (
    estimateMessagesTokens([
      { role: 'system', content: systemPrompt },
      { role: 'user', content: input.lastQuestion },
    ]) +
    estimateToolSpecTokens(specs) +
    recalled * TYPICAL_SOURCE_TOKENS
  );
}
