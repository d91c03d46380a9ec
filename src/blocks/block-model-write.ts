import { and, eq, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { blockHistory, blocks } from '../db/schema/index.js';
import type { MemoryWriteScreen } from '../memory/memory-write-screen.js';
import { readBlockCall } from './block-edits.js';
import { blockKey, keyOf, recordEvent, toBlock, toEvent } from './block-rows.js';
import { checkValue, refuseReadOnly } from './block-rules.js';
import {
  type Block,
  type BlockActor,
  BlockConflictError,
  type BlockEvent,
  BlockNotFoundError,
  type BlockScope,
  BlockWriteError,
  type ModelWrite,
  type ModelWriteResult,
} from './block-types.js';

export interface BlockWriteParts {
  db: Db;
  tenantId: string;
  screen?: MemoryWriteScreen | undefined;
}

/** How specific a scope is: the agent's view of the user, then the user's, then the agent's. */
const specificity = (block: Block) => (block.agentId && block.userId ? 2 : block.userId ? 1 : 0);

/**
 * A model's write: screened first (the firewall may run a model; no lock is held meanwhile), then,
 * in one transaction, the candidate blocks locked, the most specific chosen, the edit applied to
 * the value as it is now and checked. A quarantined write is recorded with its call, not applied.
 */
export async function modelBlockWrite(parts: BlockWriteParts, write: ModelWrite): Promise<ModelWriteResult> {
  const { db, tenantId, screen } = parts;
  const { agentId, userId, call, signal } = write;
  const { label, edit, text } = readBlockCall(call);
  // The turn's user is recorded even on an agent's block, which its erasure must reach.
  const actor: BlockActor = { ...write.actor, tool: call.tool, ...(userId ? { userId } : {}) };
  const screened = screen?.screens({ type: 'tool', conversationId: write.actor.conversationId, turn: 0 }) ?? false;
  const verdict = screened ? (await screen!.screen([text]))[0] : undefined;
  signal?.throwIfAborted();
  return db.transaction(async (tx) => {
    const agentOnly = and(eq(blocks.agentId, agentId), eq(blocks.userId, ''));
    const scopes = userId
      ? or(agentOnly, and(eq(blocks.agentId, ''), eq(blocks.userId, userId)), and(eq(blocks.agentId, agentId), eq(blocks.userId, userId)))
      : agentOnly;
    // Locked, so that two writes to one block take turns: each edits the value the other left.
    const rows = await tx
      .select()
      .from(blocks)
      .where(and(eq(blocks.tenantId, tenantId), eq(blocks.label, label), scopes))
      .for('update');
    const block = rows.map(toBlock).sort((a, b) => specificity(b) - specificity(a))[0];
    if (!block) throw new BlockWriteError('label', `no block '${label}' in this turn's working memory`);
    if (block.readOnly) refuseReadOnly(block);
    const value = edit(block);
    checkValue(block, value, block);
    // A tool that timed out (or a turn aborted) while this waited for the lock was told it failed:
    // thrown here, the transaction rolls back and nothing is written.
    signal?.throwIfAborted();
    if (verdict?.status === 'quarantined') {
      await recordEvent(tx, tenantId, { ...block, value }, 'quarantined', { ...actor, arguments: call.arguments }, { reasons: verdict.reasons });
      return { block, status: 'quarantined', reasons: [...verdict.reasons] };
    }
    const [row] = await tx
      .update(blocks)
      .set({ value, updatedAt: sql`now()` })
      .where(blockKey(tenantId, label, block))
      .returning();
    const written = toBlock(row!);
    await recordEvent(tx, tenantId, written, 'written', actor);
    return { block: written, status: 'applied', reasons: [] };
  });
}

/** The held write's edit made to the block as it is now, or why it cannot be. */
function reapply(event: BlockEvent, block: Block): string {
  const { actor } = event;
  const which = `held write #${event.id}`;
  if (actor.type !== 'model' || !actor.arguments)
    throw new BlockConflictError(`${which} does not record its edit, so it cannot be made again; nothing was changed`);
  try {
    const value = readBlockCall({ tool: actor.tool, arguments: actor.arguments }).edit(block);
    checkValue(block, value, block);
    return value;
  } catch (error) {
    if (!(error instanceof BlockWriteError)) throw error;
    throw new BlockConflictError(`${which} (${actor.tool}) no longer applies to block '${block.label}' as it is now: ${error.message}; nothing was changed`);
  }
}

/**
 * Makes a write the firewall held again, to the block's value as it is now (writes since it was
 * held are kept), under the block's row lock; its limit or schema may have changed too. The held
 * event is marked approved.
 */
export async function approveBlockWrite(parts: BlockWriteParts, label: string, eventId: number, scope: BlockScope): Promise<Block> {
  const { db, tenantId } = parts;
  return db.transaction(async (tx) => {
    const [held] = await tx
      .select()
      .from(blockHistory)
      .where(
        and(
          eq(blockHistory.tenantId, tenantId),
          eq(blockHistory.id, eventId),
          eq(blockHistory.label, label),
          eq(blockHistory.agentId, keyOf(scope.agentId)),
          eq(blockHistory.userId, keyOf(scope.userId)),
          eq(blockHistory.status, 'quarantined'),
        ),
      )
      .for('update');
    if (!held) throw new BlockNotFoundError(label, `No quarantined write #${eventId} of block '${label}' in this scope`);
    const event = toEvent(held);
    const [current] = await tx
      .select()
      .from(blocks)
      .where(blockKey(tenantId, event.label, scope))
      .for('update');
    if (!current) throw new BlockNotFoundError(event.label);
    const value = reapply(event, toBlock(current));
    const [row] = await tx
      .update(blocks)
      .set({ value, updatedAt: sql`now()` })
      .where(blockKey(tenantId, event.label, scope))
      .returning();
    await tx.update(blockHistory).set({ status: 'approved' }).where(eq(blockHistory.id, eventId));
    const approved = toBlock(row!);
    // The held write's user goes with it: their erasure reaches the value it approved.
    const heldUser = event.actor.type === 'model' && event.actor.userId ? { userId: event.actor.userId } : {};
    await recordEvent(tx, tenantId, approved, 'approved', { type: 'api', approves: eventId, ...heldUser });
    return approved;
  });
}
