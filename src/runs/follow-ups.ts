import type { FollowUp, Run, RunStore } from './run-types.js';

/** Starts a follow-up as the conversation's next turn, its own run, which inherits the rest of the queue. */
export type StartFollowUp = (run: Run, followUp: FollowUp, rest: FollowUp[]) => Promise<unknown>;

/**
 * After a run's turn completed: its first follow-up starts the conversation's next turn, and takes
 * the others along, so that each starts when the one before it completes. Read after the run's end
 * was written, so every follow-up the store accepted is here (later ones were refused as finished).
 * A follow-up of a run that failed or was cancelled never starts.
 */
export async function startFollowUps(runs: RunStore, runId: string, start: StartFollowUp): Promise<void> {
  const run = await runs.get(runId);
  if (run?.status !== 'completed') return;
  const [first, ...rest] = run.followUps;
  if (first) await start(run, first, rest);
}
