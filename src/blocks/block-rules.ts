import { BLOCK_LIMITS } from './block-fields.js';
import { schemaProblem, valueMismatch } from './block-json-schema.js';
import { type Block, BlockWriteError } from './block-types.js';

type Rules = Pick<Block, 'label' | 'limit' | 'schema'>;

/** How much room a block has left, in words the model and a client read alike. */
export function roomLeft(block: Pick<Block, 'limit' | 'value'>): string {
  return `${Math.max(0, block.limit - block.value.length)} of its ${block.limit} characters are left`;
}

/**
 * Refuses a value the block cannot hold: over its limit, or (with a schema) not JSON satisfying
 * it. `field` is the input's name for the value (`value` for the API, the tool's argument).
 */
export function checkValue(rules: Rules, value: string, current: Pick<Block, 'value'> | undefined, field = 'value'): void {
  if (value.length > rules.limit) {
    const room = current ? ` (${roomLeft({ limit: rules.limit, value: current.value })})` : '';
    throw new BlockWriteError(
      field,
      `block '${rules.label}' holds at most ${rules.limit} characters: this would make it ${value.length}, ${value.length - rules.limit} over${room}`,
    );
  }
  if (rules.schema) {
    const mismatch = valueMismatch(rules.schema, value);
    if (mismatch) {
      const at = mismatch.path === '' ? '' : ` at ${mismatch.path}`;
      throw new BlockWriteError(
        mismatch.path === '' ? field : `${field}${mismatch.path.replaceAll('/', '.')}`,
        `${field}${at} ${mismatch.message} (block '${rules.label}' has a schema)`,
      );
    }
  }
}

/** Refuses a limit out of range or a schema that does not compile (what zod cannot say). */
export function checkSettings(settings: { limit: number; schema: Record<string, unknown> | null }): void {
  if (!Number.isInteger(settings.limit) || settings.limit < 1 || settings.limit > BLOCK_LIMITS.maxLimit) {
    throw new BlockWriteError('limit', `limit must be an integer from 1 to ${BLOCK_LIMITS.maxLimit}`);
  }
  if (settings.schema) {
    const problem = schemaProblem(settings.schema);
    if (problem) throw new BlockWriteError('schema', `schema ${problem}`);
  }
}

/** A model's write refused on a read-only block. */
export function refuseReadOnly(block: Block): never {
  throw new BlockWriteError('label', `block '${block.label}' is read-only: the model cannot change it (${roomLeft(block)})`);
}
