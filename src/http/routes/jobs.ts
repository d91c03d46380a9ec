import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { FINAL_JOB_STATUSES, type Job } from '../../jobs/job-types.js';
import type { ApiEnv } from '../api-env.js';
import { HttpError, notFound } from '../../api/errors.js';
import { jobView } from '../job-view.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { errorResponse, jsonReply, notFoundResponse } from '../openapi/route-responses.js';
import { jobEventSchema, jobIdParams, jobPageSchema, jobReplySchema, listJobsQuery } from '../../api/schemas/job-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseQuery, parseWith } from '../validate.js';

// How often an event stream looks at its job: progress is written by whichever process works on it.
const EVENT_POLL_MS = 200;

/** `/v1/jobs`: durable jobs (asynchronous and batch ingestion, fact extraction): read, list, follow, cancel, retry. */
export function createJobRoutes(ctx: AppContext): ApiRoutes {
  const jobsOf = (c: Context<ApiEnv>) => ctx.jobs.forTenant(tenantOf(c));
  const routes = createApiRoutes();
  const jobNotFound = notFoundResponse('job');

  /** The job with, for a batch, its items; another tenant's job is a 404, like a missing one. */
  const view = async (c: Context<ApiEnv>, id: string) => {
    const store = jobsOf(c);
    const job = await store.get(id);
    if (!job) throw notFound(`No job with id ${JSON.stringify(id)}`);
    return { job, view: job.kind === 'batch' ? jobView(job, await store.batch(id)) : jobView(job) };
  };

  const getJobRoute = createRoute({
    method: 'get',
    path: '/{id}',
    operationId: 'getJob',
    tags: [TAGS.jobs],
    summary: 'Read a job: its status, progress and result',
    request: { params: jobIdParams },
    responses: { 200: jsonReply('The job.', jobReplySchema), 404: jobNotFound },
  });
  defineRoute(routes, getJobRoute, async (c) => {
    const { id } = parseWith(jobIdParams, c.req.param(), 'path');
    return c.json({ job: (await view(c, id)).view });
  });

  const listJobsRoute = createRoute({
    method: 'get',
    path: '/',
    operationId: 'listJobs',
    tags: [TAGS.jobs],
    summary: 'List jobs, newest first (by status and kind, cursor pagination)',
    request: { query: listJobsQuery },
    responses: { 200: jsonReply('One page.', jobPageSchema) },
  });
  defineRoute(routes, listJobsRoute, async (c) => {
    const options = parseQuery(c, listJobsQuery);
    const page = await jobsOf(c).list(options);
    return c.json({ items: page.items.map((job) => jobView(job)), nextCursor: page.nextCursor });
  });

  const cancelJobRoute = createRoute({
    method: 'post',
    path: '/{id}/cancel',
    operationId: 'cancelJob',
    tags: [TAGS.jobs],
    summary: 'Cancel a job',
    description:
      'A queued job is not run; a running one stops at its next step and writes nothing. A batch cancels its items ' +
      'that have not ended. A job that ended first (its document written) keeps its ending: 409.',
    request: { params: jobIdParams },
    responses: {
      200: jsonReply('The cancelled job.', jobReplySchema),
      404: jobNotFound,
      409: errorResponse({ codes: ['job_ended'], description: 'The job has ended already.' }),
    },
  });
  defineRoute(routes, cancelJobRoute, async (c) => {
    const { id } = parseWith(jobIdParams, c.req.param(), 'path');
    const outcome = await jobsOf(c).cancel(id);
    if (!outcome) throw notFound(`No job with id ${JSON.stringify(id)}`);
    if (!outcome.cancelled) throw new HttpError(409, 'job_ended', `Job ${id} has ended already: ${outcome.job.status}`);
    return c.json({ job: (await view(c, id)).view });
  });

  const retryJobRoute = createRoute({
    method: 'post',
    path: '/{id}/retry',
    operationId: 'retryJob',
    tags: [TAGS.jobs],
    summary: 'Run a failed job again',
    description:
      'Queues a failed job again, with its attempts counted afresh; an item of a batch reopens its batch. A job that has not ' +
      'failed (open, succeeded or cancelled) answers 409 `job_not_failed`; one whose text or file was dropped when it failed ' +
      '(documents sent inline or uploaded: send them again) 409 `job_input_gone`.',
    request: { params: jobIdParams },
    responses: {
      200: jsonReply('The job, queued.', jobReplySchema),
      404: jobNotFound,
      409: errorResponse({ codes: ['job_not_failed', 'job_input_gone'], description: 'The job cannot be run again.' }),
    },
  });
  defineRoute(routes, retryJobRoute, async (c) => {
    const { id } = parseWith(jobIdParams, c.req.param(), 'path');
    const outcome = await jobsOf(c).retry(id);
    if (!outcome) throw notFound(`No job with id ${JSON.stringify(id)}`);
    if (outcome.refused === 'not_failed') throw new HttpError(409, 'job_not_failed', `Job ${id} has not failed: ${outcome.job.status}`);
    if (outcome.refused === 'input_gone') throw new HttpError(409, 'job_input_gone', `Job ${id} no longer holds its input: send it again`);
    // As queued: a worker may have claimed it since.
    return c.json({ job: jobView(outcome.job) });
  });

  const jobEventsRoute = createRoute({
    method: 'get',
    path: '/{id}/events',
    operationId: 'jobEvents',
    tags: [TAGS.jobs],
    summary: "Follow a job's progress (Server-Sent Events)",
    description:
      'One `progress` event with the job as it is, then one at each change (stage, embedded chunks, items of a batch), ' +
      'until the last, named by the final status. Event ids grow with each change: with `Last-Event-ID` only what changed ' +
      'after it is sent. Works from any server of the database, whichever process runs the job.',
    request: { params: jobIdParams, headers: z.object({ 'last-event-id': z.string().optional() }) },
    responses: {
      200: { description: 'The events.', content: { 'text/event-stream': { schema: jobEventSchema } } },
      404: jobNotFound,
    },
  });
  defineRoute(routes, jobEventsRoute, async (c) => {
    const { id } = parseWith(jobIdParams, c.req.param(), 'path');
    // Before the stream starts, so that a missing job is a plain 404.
    const first = await view(c, id);
    const raw = c.req.header('last-event-id')?.trim();
    let sent = raw !== undefined && /^\d{1,9}$/.test(raw) ? Number(raw) : -1;
    return streamSSE(c, async (stream) => {
      let gone = false;
      stream.onAbort(() => {
        gone = true;
      });
      let current: { job: Job; view: unknown } = first;
      for (;;) {
        const ended = FINAL_JOB_STATUSES.includes(current.job.status);
        if (current.job.eventSeq > sent || ended) {
          sent = current.job.eventSeq;
          await stream.writeSSE({ id: String(sent), event: ended ? current.job.status : 'progress', data: JSON.stringify({ job: current.view }) });
        }
        if (ended || gone) return;
        await stream.sleep(EVENT_POLL_MS);
        if (gone) return;
        try {
          current = await view(c, id);
        } catch (err) {
          // Deleted meanwhile, or the database went away: the stream ends, the client may reconnect.
          await stream.writeSSE({ event: 'error', data: JSON.stringify({ error: { code: 'stream_ended', message: (err as Error).message } }) });
          return;
        }
      }
    });
  });

  return routes;
}
