import type { Tool } from '../llm/tool.js';
import type { BlockTemplate } from './block-fields.js';
import { renderBlocks } from './block-prompt.js';
import { createBlockTools } from './block-tools.js';
import type { Block, BlockStore } from './block-types.js';

export interface WorkingMemory {
  blocks: Block[];
  // biome-ignore lint/suspicious/noExplicitAny: tools of different argument schemas in one list.
  tools: Tool<any>[];
  /** The blocks as the system prompt carries them, naming only the tools the turn was given. */
  render(offered: ReadonlySet<string>): string;
}

export interface TurnScope {
  agentId: string;
  userId: string | null;
  runId: string;
  conversationId: string;
  /** The agent's templates: the user-scope ones become the user's blocks on their first turn with the agent. */
  templates: readonly BlockTemplate[] | undefined;
}

/** A turn's working memory: its user's blocks made from the templates if new, then what it sees, and the tools to keep it. */
export async function loadWorkingMemory(store: BlockStore, scope: TurnScope): Promise<WorkingMemory> {
  if (scope.userId && scope.templates?.length) await store.instantiateUserTemplates(scope.agentId, scope.userId, scope.templates);
  const blocks = await store.visible(scope.agentId, scope.userId);
  const tools = createBlockTools({ blocks: store, ...scope, visible: blocks });
  return { blocks, tools, render: (offered) => renderBlocks(blocks, offered) };
}
