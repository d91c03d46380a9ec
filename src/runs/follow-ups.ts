import type { FollowUp, Run } from './run-types.js';

/** Starts a follow-up as the conversation's next turn, its own run, which inherits the rest of the queue. */
export type StartFollowUp = (run: Run, followUp: FollowUp, rest: FollowUp[]) => Promise<unknown>;

/**
 * After a run's turn completed: its first follow-up starts the conversation's next turn, and takes
 * the others along, so that each starts when the one before it completes. `run` is as its end left
 * it (`RunStore.endClaimed`), so every follow-up the store accepted is here (later ones were
 * refused as finished). A follow-up of a run that failed or was cancelled never starts.
 */
export async function startFollowUps(run: Run, start: StartFollowUp): Promise<void> {
  if (run.status !== 'completed') return;
  const [first, ...rest] = run.followUps;
  if (first) await start(run, first, rest);
}
