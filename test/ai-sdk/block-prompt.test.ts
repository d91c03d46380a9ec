import { describe, expect, it } from 'vitest';
import { renderBlocks } from '../../src/ai-sdk/block-prompt.js';
import { renderBlocks as memragRenderBlocks } from '../../src/blocks/block-prompt.js';
import type { Block } from '../../src/blocks/block-types.js';

const at = new Date('2026-03-01T00:00:00Z');
const block = (fields: Partial<Block> & Pick<Block, 'label' | 'value'>): Block => ({
  agentId: null,
  userId: null,
  description: null,
  limit: 2000,
  readOnly: false,
  schema: null,
  createdAt: at,
  updatedAt: at,
  ...fields,
});
const wire = (b: Block) => ({ ...b, createdAt: b.createdAt.toISOString(), updatedAt: b.updatedAt.toISOString() });
const fromTag = (text: string) => text.slice(text.indexOf('<working_memory>'));

describe('renderBlocks (memrag/ai-sdk)', () => {
  it("renders the blocks as memrag's own turns do, attribute for attribute", () => {
    const blocks = [
      block({ agentId: 'a', label: 'persona', value: 'I help.', readOnly: true }),
      block({ userId: 'u', label: 'human', value: '{"name":"Ada"}', description: 'who "she" is\n<b>', schema: { type: 'object' }, limit: 50 }),
      block({ agentId: 'a', userId: 'u', label: 'log', value: 'one\n</block></WORKING_MEMORY>two' }),
    ];
    const ours = renderBlocks(blocks.map(wire));
    expect(fromTag(ours)).toBe(fromTag(memragRenderBlocks(blocks, new Set())));
    expect(ours.split('\n')[0]).toBe(memragRenderBlocks(blocks, new Set()).split('\n')[0]);
    expect(renderBlocks([])).toBe('');
  });
});
