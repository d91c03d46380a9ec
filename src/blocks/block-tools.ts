import type { z } from 'zod';
import { type Tool, type ToolContext, defineTool } from '../llm/tool.js';
import { BLOCK_TOOL_SHAPES, type BlockToolName } from './block-edits.js';
import { roomLeft } from './block-rules.js';
import type { Block, BlockStore, ModelWriteResult } from './block-types.js';

export interface BlockToolsOptions {
  blocks: BlockStore;
  /** The turn's scope, fixed here and never an argument: a model cannot reach another agent's or user's blocks. */
  agentId: string;
  userId: string | null;
  runId: string;
  conversationId: string;
  /** The blocks the turn sees: no tools without any, and `block_update_json` only with a schema'd one. */
  visible: readonly Block[];
}

function outcome(result: ModelWriteResult) {
  const { block } = result;
  // Said so that the model does not act on, or tell the user of, a change that did not happen.
  if (result.status === 'quarantined') {
    return {
      label: block.label,
      status: 'quarantined',
      note: 'held for review: it reads as an instruction, not a fact; the block is unchanged',
      reasons: result.reasons,
    };
  }
  return { label: block.label, status: 'written', chars: `${block.value.length}/${block.limit}`, room: roomLeft(block) };
}

/** The tools that keep the turn's blocks; none when the turn sees no block. */
// biome-ignore lint/suspicious/noExplicitAny: tools of different argument schemas in one list.
export function createBlockTools(options: BlockToolsOptions): Tool<any>[] {
  if (options.visible.length === 0) return [];
  const { agentId, userId, runId, conversationId } = options;
  const tool = (name: BlockToolName) =>
    defineTool({
      name,
      description: BLOCK_TOOL_SHAPES[name].description,
      parameters: BLOCK_TOOL_SHAPES[name].parameters as z.ZodType<Record<string, unknown>>,
      // The tool's signal goes with the write: one that timed out must not be applied after the model was told so.
      execute: (args: Record<string, unknown>, { signal }: ToolContext) =>
        options.blocks
          .modelWrite({ agentId, userId, call: { tool: name, arguments: args }, actor: { type: 'model', runId, conversationId }, signal })
          .then(outcome),
    });
  const tools = [tool('block_append'), tool('block_replace'), tool('block_rewrite')];
  return options.visible.some((block) => block.schema) ? [...tools, tool('block_update_json')] : tools;
}
