import { tool } from 'ai';
import { z } from 'zod';
import type { MemragClient } from '../client/memrag-client.js';
import { dataOf } from './memrag-api-error.js';
import { type Block, type BlockViewer, mostSpecific, scopeWords, visibleBlocks } from './visible-blocks.js';

// The API's bounds on a block (`/v1/blocks`): a label's pattern, and the most a value may hold.
const LABEL = /^[a-z0-9_-]{1,64}$/;
const VALUE_MAX = 20_000;

const label = z.string().regex(LABEL, 'must be 1 to 64 characters of a-z, 0-9, _ and -').describe("The block's label, as working memory shows it.");
const text = z.string().min(1).max(VALUE_MAX);

const roomLeft = (block: Pick<Block, 'limit' | 'value'>) => `${Math.max(0, block.limit - block.value.length)} of its ${block.limit} characters are left`;

/** A block as the model reads it: what it is, whose, and how full. */
const shown = (block: Block) => ({
  label: block.label,
  scope: scopeWords(block),
  ...(block.description ? { description: block.description } : {}),
  value: block.value,
  chars: `${block.value.length}/${block.limit}`,
  ...(block.readOnly ? { readOnly: true } : {}),
  ...(block.schema ? { schema: block.schema } : {}),
});

function occurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) n++;
  return n;
}

/**
 * The working-memory tools of `memragTools`: the model reads the blocks memrag's turns would show
 * for the agent and user, and keeps them with the edits memrag's own `block_append`,
 * `block_replace` and `block_rewrite` make, refused as they are (a read-only block, over the limit,
 * an ambiguous replace). A write is the block read, edited here, and put back whole (`PUT
 * /v1/blocks/{label}`, where the API checks limit and schema again), so it is not under memrag's
 * row lock: two writers of one block at the same moment may lose one's edit.
 */
export function memragBlockTools(client: MemragClient, viewer: BlockViewer) {
  const find = async (wanted: string, signal: AbortSignal | undefined): Promise<Block> => {
    const block = mostSpecific(await visibleBlocks(client, viewer, signal), wanted);
    if (!block) throw new Error(`No block '${wanted}' in this working memory: listBlocks names the blocks there are`);
    return block;
  };

  /** The edit made to the block the label names, and the block put back with its settings kept. */
  const write = async (wanted: string, edit: (block: Block) => string, signal: AbortSignal | undefined) => {
    const block = await find(wanted, signal);
    if (block.readOnly) throw new Error(`Block '${block.label}' is read-only: it cannot be changed (${roomLeft(block)})`);
    const value = edit(block);
    if (value.length > block.limit) {
      throw new Error(
        `Block '${block.label}' holds at most ${block.limit} characters: this would make it ${value.length}, ${value.length - block.limit} over (${roomLeft(block)})`,
      );
    }
    const { agentId, userId, description, limit, readOnly, schema } = block;
    const put = await client.PUT('/v1/blocks/{label}', {
      params: { path: { label: block.label } },
      body: {
        ...(agentId ? { agentId } : {}),
        ...(userId ? { userId } : {}),
        value,
        ...(description !== null ? { description } : {}),
        limit,
        readOnly,
        ...(schema ? { schema } : {}),
      },
      ...(signal ? { signal } : {}),
    });
    const written = dataOf('putBlock', put).block;
    return { label: written.label, scope: scopeWords(written), chars: `${written.value.length}/${written.limit}` };
  };

  return {
    listBlocks: tool({
      description:
        "List the working-memory blocks kept about the user and by the agent (what memrag's turns show in every prompt): " +
        'each with its label, scope, description, value, and characters used of its limit.',
      inputSchema: z.object({}),
      execute: async (_input, { abortSignal }) => ({ blocks: (await visibleBlocks(client, viewer, abortSignal)).map(shown) }),
    }),

    readBlock: tool({
      description: 'Read one working-memory block by its label (the most specific one: about this user before the shared ones).',
      inputSchema: z.object({ label }),
      execute: async (input, { abortSignal }) => ({ block: shown(await find(input.label, abortSignal)) }),
    }),

    appendToBlock: tool({
      description: 'Append text, on a new line, to a working-memory block: something lasting learned about the user or the task.',
      inputSchema: z.object({ label, text: text.describe('The text to add.') }),
      execute: (input, { abortSignal }) => write(input.label, (block) => (block.value === '' ? input.text : `${block.value}\n${input.text}`), abortSignal),
    }),

    replaceInBlock: tool({
      description: 'Replace the one occurrence of `old` in a working-memory block with `new` (an empty `new` deletes it).',
      inputSchema: z.object({
        label,
        old: text.describe('The text to replace: enough of it to occur exactly once in the block.'),
        new: z.string().max(VALUE_MAX).describe('What replaces it.'),
      }),
      execute: (input, { abortSignal }) =>
        write(
          input.label,
          (block) => {
            const n = occurrences(block.value, input.old);
            if (n === 0) throw new Error(`'old' does not occur in block '${block.label}'; it is unchanged`);
            if (n > 1) throw new Error(`'old' occurs ${n} times in block '${block.label}': give enough of the text to match exactly one`);
            return block.value.replace(input.old, () => input.new);
          },
          abortSignal,
        ),
    }),

    rewriteBlock: tool({
      description: 'Replace the whole value of a working-memory block (JSON satisfying its schema, for a block that has one).',
      inputSchema: z.object({ label, value: z.string().max(VALUE_MAX).describe('The new value, whole.') }),
      execute: (input, { abortSignal }) => write(input.label, () => input.value, abortSignal),
    }),
  };
}
