import { z } from 'zod';
import type { JobHandler } from '../../jobs/job-runner.js';
import type { Job, JobKind } from '../../jobs/job-types.js';
import { PermanentJobError } from '../../jobs/job-types.js';
import type { JobStore } from '../../jobs/job-store.js';
import type { MemoryExtractor } from './memory-extractor.js';

export const EXTRACTION_JOB_KIND = 'extraction' satisfies JobKind;

/** What an extraction job carries: the turn's scope and the messages read, so it runs without the conversation. */
export const extractionPayloadSchema = z.object({
  agentId: z.string().min(1),
  /** Null: the agent's shared memories. */
  userId: z.string().min(1).nullable(),
  conversationId: z.string().min(1),
  turn: z.number().int().min(0),
  /** When the turn was stored: the times its messages name are read against it, however late the job runs. */
  at: z.iso.datetime(),
  messages: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.string() })).min(1),
});
export type ExtractionJobPayload = z.infer<typeof extractionPayloadSchema>;

/** Told the facts drawn from a turn, whatever became of them as memories (repeats included): they become keys of the turn. */
export type TurnFactsSink = (tenantId: string, source: { conversationId: string; turn: number }, facts: string[], signal: AbortSignal) => Promise<unknown>;

/** Queues a turn's extraction under its user, so that erasing the user erases the job and the words it holds. */
export function queueExtraction(jobs: JobStore, payload: ExtractionJobPayload): Promise<Job> {
  return jobs.enqueue(EXTRACTION_JOB_KIND, { payload, userId: payload.userId });
}

export interface ExtractionJobOptions {
  extractorFor: (tenantId: string) => MemoryExtractor;
  /**
   * Whether the turn's conversation is still there, asked just before the memories are written: a
   * deleted conversation takes its words with it, and its queued extraction writes nothing.
   */
  conversationExists?: (tenantId: string, conversationId: string, agentId: string) => Promise<boolean>;
  factKeys?: TurnFactsSink;
  /** Told when the facts could not be made keys of their turn: logged, the memories written stand. */
  onFactKeysFailure?: (error: unknown, source: { conversationId: string; turn: number }) => void;
}

/**
 * Runs a queued turn's extraction. A model request that fails as a whole (an error, a timeout, a
 * reply that is not the JSON asked for) fails the attempt with nothing written, and the runner
 * retries it with its backoff; single unusable decisions are counted and skipped, as in the
 * synchronous route. Memories are written before the job is marked succeeded, not with it: a
 * worker lost in between runs the extraction again, and the store's deduplication of added facts
 * keeps that from adding them twice.
 */
export function extractionJobHandler(options: ExtractionJobOptions): JobHandler {
  return async ({ job, signal, report, checkpoint }) => {
    const parsed = extractionPayloadSchema.safeParse(job.payload);
    if (!parsed.success) throw new PermanentJobError('invalid_job', `the job's input is not valid: ${parsed.error.message}`);
    const { agentId, userId, conversationId, turn, at, messages } = parsed.data;
    const source = { conversationId, turn };
    report({ stage: 'extract', done: 0, total: 1 });
    const gone = async () => options.conversationExists !== undefined && !(await options.conversationExists(job.tenantId, conversationId, agentId));
    const nothing = { facts: 0, applied: 0, skipped: 0, failures: 0, keys: [], conversationDeleted: true };
    if (await gone()) return nothing;
    let deleted = false;
    const { decisions, failures } = await options
      .extractorFor(job.tenantId)
      .extract({
        messages,
        scope: { agentId, userId },
        source,
        at: new Date(at),
        signal,
        failOnModelError: true,
        // A job cancelled, or erased with its user, or whose conversation was deleted while the model ran, writes nothing.
        beforeApply: async () => {
          await checkpoint();
          if (await gone()) {
            deleted = true;
            throw new ConversationDeleted();
          }
        },
      })
      .catch((err: unknown) => {
        if (err instanceof ConversationDeleted) return { decisions: [], failures: 0 };
        throw err;
      });
    if (deleted) return nothing;
    if (options.factKeys && decisions.length > 0) {
      // The memories are written: a failure here is not worth another model run.
      await options
        .factKeys(
          job.tenantId,
          source,
          decisions.map((d) => d.fact),
          signal,
        )
        .catch((error: unknown) => {
          if (!signal.aborted) options.onFactKeysFailure?.(error, source);
        });
    }
    const applied = decisions.filter((d) => d.status === 'applied');
    return {
      facts: decisions.length,
      applied: applied.length,
      skipped: decisions.length - applied.length,
      failures,
      keys: [...new Set(applied.flatMap((d) => (d.key ? [d.key] : [])))],
    };
  };
}

/** Thrown before the write when the turn's conversation was deleted meanwhile: the job ends with nothing written. */
class ConversationDeleted extends Error {
  constructor() {
    super("the turn's conversation was deleted");
    this.name = 'ConversationDeleted';
  }
}
