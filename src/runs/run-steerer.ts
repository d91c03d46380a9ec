import { randomUUID } from 'node:crypto';
import { FOLLOW_UPS_MAX } from './follow-ups-limit.js';
import type { LiveRun } from './live-runs.js';
import { ENDED_STATUSES, type FollowUp, PAUSED_STATUSES, type Run, RunConflictError, RunNotFoundError, type RunStore } from './run-types.js';

/** `steer`: joins the running turn before its next model call. `follow_up`: the conversation's next turn, once this one completes. */
export interface RunMessage {
  message: string;
  mode: 'steer' | 'follow_up';
}

export interface RunMessageReceipt {
  runId: string;
  mode: RunMessage['mode'];
  /** The follow-up's own run, which starts when this run's turn completes. */
  followUp?: FollowUp;
}

export interface RunSteererOptions {
  runs: RunStore;
  /** The run, when it is live in this process. */
  liveRun(runId: string): Pick<LiveRun<unknown>, 'steering' | 'ended'> | undefined;
}

/**
 * What a client tells a run that has not ended. A steer and a pause reach the turn's loop through
 * the run's live state, so only in the process that runs it: a run running elsewhere (another
 * server), or in none any more (its server restarted; the sweeper fails it later), is a 409
 * `run_not_live`. A follow-up is stored with the run, so any server takes it while the run has not
 * ended; the server that completes the turn starts it.
 */
export function createRunSteerer(options: RunSteererOptions) {
  const { runs } = options;

  async function read(runId: string): Promise<Run> {
    const run = await runs.get(runId);
    if (!run) throw new RunNotFoundError(runId);
    return run;
  }

  function finished(run: Run): RunConflictError {
    return new RunConflictError('run_finished', `Run ${run.id} has ended (${run.status}): start a new turn with POST /v1/chat`, { status: run.status });
  }

  /** Why a follow-up was not added: the run ended meanwhile, or its queue is full. */
  function notQueued(run: Run): RunConflictError {
    if (ENDED_STATUSES.includes(run.status) || run.followUps.length < FOLLOW_UPS_MAX) return finished(run);
    return new RunConflictError(
      'follow_ups_full',
      `Run ${run.id} has ${FOLLOW_UPS_MAX} follow-ups queued already: send this one once one of them has started`,
      {
        status: run.status,
      },
    );
  }

  /** Why a run whose live steering refused is not steerable: it ended, or paused, meanwhile. */
  async function refusal(runId: string): Promise<RunConflictError> {
    const run = await read(runId);
    if (run.status === 'running' || ENDED_STATUSES.includes(run.status)) {
      // Running still: its turn made its last model call, and is being stored.
      return run.status === 'running'
        ? new RunConflictError('run_finished', `Run ${runId} has made its last model call`, { status: 'running' })
        : finished(run);
    }
    return notRunning(run);
  }

  function notRunning(run: Run): RunConflictError {
    const answer = run.status === 'paused' ? 'resume it first' : 'answer it first';
    return new RunConflictError('run_not_running', `Run ${run.id} is ${run.status}, not running: ${answer}`, { status: run.status });
  }

  /** The running turn's steering in this process; throws why there is none. */
  async function liveSteering(runId: string) {
    const run = await read(runId);
    if (ENDED_STATUSES.includes(run.status)) throw finished(run);
    if (PAUSED_STATUSES.includes(run.status)) throw notRunning(run);
    const live = options.liveRun(runId);
    if (!live || live.ended) {
      throw new RunConflictError('run_not_live', `Run ${runId} is not running on this server (another server runs it, or it was lost in a restart)`, {
        status: run.status,
      });
    }
    return live.steering;
  }

  async function sendMessage(runId: string, input: RunMessage): Promise<RunMessageReceipt> {
    if (input.mode === 'follow_up') {
      const run = await read(runId);
      if (ENDED_STATUSES.includes(run.status)) throw finished(run);
      const followUp: FollowUp = { runId: randomUUID(), message: input.message };
      if (!(await runs.addFollowUp(runId, followUp))) throw notQueued(await read(runId));
      return { runId, mode: 'follow_up', followUp };
    }
    const steering = await liveSteering(runId);
    if (!steering.steer(input.message)) throw await refusal(runId);
    return { runId, mode: 'steer' };
  }

  async function requestPause(runId: string): Promise<void> {
    const steering = await liveSteering(runId);
    if (!steering.requestPause()) throw await refusal(runId);
  }

  return { sendMessage, requestPause };
}
