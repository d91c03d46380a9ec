import {
  ENDED_STATUSES,
  PAUSED_STATUSES,
  type Run,
  type RunState,
  type RunStatus,
  type RunStore,
  type RunUpdate,
  isEndClaimed,
} from '../../../src/runs/run-types.js';

/**
 * A RunStore in memory, with the real one's compare-and-set and expiry: for unit tests of what
 * drives runs, without a database.
 */
export function createInMemoryRunStore(): RunStore & { states: Map<string, RunState | null> } {
  const runs = new Map<string, Run>();
  const threads = new Map<string, string>();
  const states = new Map<string, RunState | null>();
  const reasonings = new Map<string, string>();
  const expired = (run: Run) => PAUSED_STATUSES.includes(run.status) && run.expiresAt !== null && run.expiresAt.getTime() <= Date.now();
  const read = (run: Run): Run => (expired(run) ? { ...run, status: 'expired' } : { ...run });
  const write = (id: string, run: Run, update: RunUpdate) => {
    run.status = update.status;
    if (update.usage !== undefined) run.usage = update.usage;
    if (update.stopReason !== undefined) run.stopReason = update.stopReason;
    if (update.error !== undefined) run.error = update.error;
    if (update.expiresAt !== undefined) run.expiresAt = update.expiresAt;
    if (update.state !== undefined) states.set(id, structuredClone(update.state));
    if (update.threadKey !== undefined) threads.set(id, update.threadKey);
    if (update.reasoning) reasonings.set(id, update.reasoning);
    else if (update.reasoning === null) reasonings.delete(id);
    run.updatedAt = new Date();
  };
  return {
    states,
    async create(input) {
      const now = new Date();
      const run: Run = {
        id: input.id,
        status: input.status,
        agentId: input.agentId,
        userId: input.userId,
        conversationId: input.conversationId,
        agentVersion: input.agentVersion,
        usage: input.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        stopReason: input.stopReason ?? null,
        error: null,
        expiresAt: null,
        followUps: [...(input.followUps ?? [])],
        parentRunId: input.parentRunId ?? null,
        role: input.role ?? null,
        createdAt: now,
        updatedAt: now,
      };
      runs.set(run.id, run);
      states.set(run.id, null);
      if (input.threadKey !== undefined) threads.set(run.id, input.threadKey);
      return { ...run };
    },
    async get(id) {
      const run = runs.get(id);
      return run ? { ...read(run), followUps: [...run.followUps] } : null;
    },
    async load(id) {
      const run = runs.get(id);
      const reasoning = reasonings.get(id);
      return run ? { run: read(run), state: structuredClone(states.get(id) ?? null), ...(reasoning ? { reasoning } : {}) } : null;
    },
    async update(id, update, from?: readonly RunStatus[]) {
      const run = runs.get(id);
      if (!run || expired(run) || isEndClaimed(run) || (from && !from.includes(run.status))) return false;
      write(id, run, update);
      return true;
    },
    async claimEnd(id, stopReason) {
      const run = runs.get(id);
      if (run?.status !== 'running' || run.stopReason !== null) return false;
      run.stopReason = stopReason;
      run.updatedAt = new Date();
      return true;
    },
    async endClaimed(id, update) {
      const run = runs.get(id);
      if (!run || !isEndClaimed(run)) return null;
      write(id, run, update);
      return { ...read(run), followUps: [...run.followUps] };
    },
    async addFollowUp(id, followUp) {
      const run = runs.get(id);
      if (!run || ENDED_STATUSES.includes(read(run).status)) return false;
      run.followUps.push(followUp);
      return true;
    },
    async statusOf(id) {
      const run = runs.get(id);
      return run ? read(run).status : null;
    },
    async children(parentRunId) {
      return [...runs.values()].filter((run) => run.parentRunId === parentRunId).map(read);
    },
    async waitingIn(conversationId) {
      for (const run of runs.values()) if (run.conversationId === conversationId && PAUSED_STATUSES.includes(read(run).status)) return run.id;
      return null;
    },
    async conversationOfThread(threadKey, agentId, userId) {
      const marked = [...runs.values()].filter(
        (run) => threads.get(run.id) === threadKey && run.agentId === agentId && run.userId === userId && run.status !== 'failed' && run.status !== 'cancelled',
      );
      return marked.at(-1)?.conversationId ?? null;
    },
  };
}
