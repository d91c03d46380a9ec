import { z } from 'zod';
import { BLOCK_LIMITS, blockLabelSchema } from './block-fields.js';
import { mergePatch } from './block-json-schema.js';
import { type BlockCall, type BlockEdit, BlockWriteError } from './block-types.js';

const text = z.string().min(1).max(BLOCK_LIMITS.maxLimit);

/** The model's block tools as it is told of them; their arguments are what a held write keeps. */
export const BLOCK_TOOL_SHAPES = {
  block_append: {
    description: 'Append text (on a new line) to a working-memory block.',
    parameters: z.strictObject({ label: blockLabelSchema, text }),
  },
  block_replace: {
    description: 'Replace the one occurrence of `old` in a working-memory block with `new` (empty `new` deletes it).',
    parameters: z.strictObject({ label: blockLabelSchema, old: text, new: z.string().max(BLOCK_LIMITS.maxLimit) }),
  },
  block_rewrite: {
    description: 'Replace the whole value of a working-memory block.',
    parameters: z.strictObject({ label: blockLabelSchema, value: z.string().max(BLOCK_LIMITS.maxLimit) }),
  },
  block_update_json: {
    description: 'Apply a JSON merge patch (null removes a member) to a working-memory block that has a schema.',
    parameters: z.strictObject({ label: blockLabelSchema, patch: z.record(z.string(), z.unknown()) }),
  },
} as const satisfies Record<BlockCall['tool'], unknown>;

export type BlockToolName = BlockCall['tool'];

/** What a call does: the block it names, how it changes the value, and the words the firewall screens. */
export interface ReadCall {
  label: string;
  edit: BlockEdit;
  text: string;
}

function occurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) n++;
  return n;
}

const appendEdit =
  (added: string): BlockEdit =>
  (block) =>
    block.value === '' ? added : `${block.value}\n${added}`;

const replaceEdit =
  (old: string, replacement: string): BlockEdit =>
  (block) => {
    const n = occurrences(block.value, old);
    if (n === 0) throw new BlockWriteError('old', `'old' does not occur in block '${block.label}'; it is unchanged`);
    if (n > 1) throw new BlockWriteError('old', `'old' occurs ${n} times in block '${block.label}': give enough of the text to match exactly one`);
    return block.value.replace(old, () => replacement);
  };

const patchEdit =
  (patch: Record<string, unknown>): BlockEdit =>
  (block) => {
    if (!block.schema) throw new BlockWriteError('label', `block '${block.label}' has no schema: use block_rewrite or block_replace`);
    let current: unknown;
    try {
      current = JSON.parse(block.value);
    } catch {
      // Patching as if it were `{}` would silently drop whatever the block held.
      throw new BlockWriteError('label', `block '${block.label}' does not hold valid JSON, so it cannot be patched: use block_rewrite; it is unchanged`);
    }
    return JSON.stringify(mergePatch(current, patch));
  };

/**
 * Reads a call of a block tool, checking its arguments (a held write's come back from the
 * database or an import, so they are checked again); refused with a BlockWriteError on `edit`.
 */
export function readBlockCall(call: { tool: string; arguments: unknown }): ReadCall {
  if (!Object.hasOwn(BLOCK_TOOL_SHAPES, call.tool)) throw new BlockWriteError('edit', `'${call.tool}' is not a block tool`);
  const tool = call.tool as BlockToolName;
  const parsed = BLOCK_TOOL_SHAPES[tool].parameters.safeParse(call.arguments);
  if (!parsed.success) throw new BlockWriteError('edit', `the arguments of ${tool} are not valid: ${z.prettifyError(parsed.error)}`);
  const args = parsed.data as Record<string, unknown> & { label: string };
  switch (tool) {
    case 'block_append':
      return { label: args.label, edit: appendEdit(args.text as string), text: args.text as string };
    case 'block_replace':
      return { label: args.label, edit: replaceEdit(args.old as string, args.new as string), text: args.new as string };
    case 'block_rewrite':
      return { label: args.label, edit: () => args.value as string, text: args.value as string };
    case 'block_update_json': {
      const patch = args.patch as Record<string, unknown>;
      return { label: args.label, edit: patchEdit(patch), text: JSON.stringify(patch) };
    }
  }
}
