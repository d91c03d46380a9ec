import { type RunSteering, createRunSteering } from './steering.js';

/**
 * Runs in progress in this process: what cancels them, and the events they sent, so that a client
 * that lost its stream can reconnect (`Last-Event-ID`) and be sent what it missed. In memory only:
 * a run lives in one process for as long as it runs, and its state is stored when it pauses.
 */
export interface LiveRun<E> {
  readonly id: string;
  /** Aborted by `cancel`, or (an abandonable run) when every listener has been gone for the grace period. */
  readonly signal: AbortSignal;
  /** Messages and a pause request for the turn's next step boundary; closed when the run ends. */
  readonly steering: RunSteering;
  /** Numbers and records an event, and hands it to every listener; returns its number. */
  emit(event: E): number;
  /**
   * Sends the events after `after` (all when undefined), then every new one, until the run ends
   * (`onEnd`) or `gone` fires. A run nobody listens to any more is aborted after the grace period.
   */
  listen(listener: { onEvent(seq: number, event: E): void; onEnd?(): void; gone?: AbortSignal; after?: number }): void;
  cancel(reason: unknown): void;
  /** No more events; kept for a while so that a client reconnecting just after still gets the last ones. */
  end(): void;
  readonly ended: boolean;
  /** The last event number handed out. */
  readonly seq: number;
}

export interface LiveRuns<E> {
  /**
   * `firstSeq`: the last event number a previous stretch of the run sent (a resumed run goes on
   * counting). `abandonable`: the run was started by a streaming client, and is aborted when no one
   * listens any more for the grace period; others (a JSON reply someone waits for) never are,
   * whoever comes to listen to their events and leaves. `steers`: messages a paused run kept for its
   * next model call.
   */
  start(tenantId: string, runId: string, options?: { firstSeq?: number; abandonable?: boolean; steers?: readonly string[] }): LiveRun<E>;
  get(tenantId: string, runId: string): LiveRun<E> | undefined;
}

export interface LiveRunsOptions {
  /** How long a run without listeners waits for one to reconnect before it is aborted. */
  graceMs: number;
  /** How long an ended run's events stay readable. */
  lingerMs?: number;
}

export function createLiveRuns<E>(options: LiveRunsOptions): LiveRuns<E> {
  const lingerMs = options.lingerMs ?? 30_000;
  const runs = new Map<string, LiveRun<E>>();
  const keyOf = (tenantId: string, runId: string) => `${tenantId}\u0000${runId}`;

  function start(tenantId: string, runId: string, startOptions: { firstSeq?: number; abandonable?: boolean; steers?: readonly string[] } = {}): LiveRun<E> {
    const key = keyOf(tenantId, runId);
    const controller = new AbortController();
    const events: Array<{ seq: number; event: E }> = [];
    type Listener = Parameters<LiveRun<E>['listen']>[0];
    const listeners = new Set<Listener>();
    let seq = startOptions.firstSeq ?? 0;
    let ended = false;
    let graceTimer: NodeJS.Timeout | undefined;

    const checkAbandoned = () => {
      if (ended || listeners.size > 0 || !startOptions.abandonable) return;
      clearTimeout(graceTimer);
      graceTimer = setTimeout(() => {
        if (!ended && listeners.size === 0) controller.abort(new Error('client disconnected'));
      }, options.graceMs);
      graceTimer.unref?.();
    };

    const run: LiveRun<E> = {
      id: runId,
      signal: controller.signal,
      steering: createRunSteering(startOptions.steers),
      get ended() {
        return ended;
      },
      get seq() {
        return seq;
      },
      emit(event) {
        seq += 1;
        events.push({ seq, event });
        for (const listener of listeners) listener.onEvent(seq, event);
        return seq;
      },
      listen(listener) {
        for (const recorded of events) if (listener.after === undefined || recorded.seq > listener.after) listener.onEvent(recorded.seq, recorded.event);
        if (ended) {
          listener.onEnd?.();
          return;
        }
        // Gone already (a client that left before the run started): counted as leaving now.
        if (listener.gone?.aborted) return checkAbandoned();
        clearTimeout(graceTimer);
        listeners.add(listener);
        listener.gone?.addEventListener(
          'abort',
          () => {
            listeners.delete(listener);
            checkAbandoned();
          },
          { once: true },
        );
      },
      cancel(reason) {
        controller.abort(reason);
      },
      end() {
        if (ended) return;
        ended = true;
        run.steering.close();
        clearTimeout(graceTimer);
        for (const listener of listeners) listener.onEnd?.();
        listeners.clear();
        const timer = setTimeout(() => {
          if (runs.get(key) === run) runs.delete(key);
        }, lingerMs);
        timer.unref?.();
      },
    };
    runs.set(key, run);
    return run;
  }

  return { start, get: (tenantId, runId) => runs.get(keyOf(tenantId, runId)) };
}
