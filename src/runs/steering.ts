/**
 * What a client tells a running turn while it runs (`POST /v1/runs/:id/messages` with `steer`,
 * `POST /v1/runs/:id/pause`): messages that join the turn before its next model call, and a
 * request to stop at the next step boundary. In memory, per live run: the turn's loop reads it
 * between steps, in this process only.
 */
export interface RunSteering {
  /** Queues a message for the next model call; false once the turn makes no more model calls. */
  steer(message: string): boolean;
  /** Asks the turn to stop at its next step boundary; false once it makes no more model calls. */
  requestPause(): boolean;
  /** The queued messages, each handed out once. */
  drain(): string[];
  pauseRequested(): boolean;
  /** Closes the queue unless messages wait in it: true when it closed (the turn may end). */
  finish(): boolean;
  /**
   * The turn makes no more model calls: later messages and pauses are refused (the caller is told
   * the run has finished) instead of being accepted and lost. Returns what was still queued.
   */
  close(): string[];
  readonly closed: boolean;
}

export function createRunSteering(queued: readonly string[] = []): RunSteering {
  let messages = [...queued];
  let pause = false;
  let closed = false;
  const drain = () => {
    const taken = messages;
    messages = [];
    return taken;
  };
  return {
    steer(message) {
      if (closed) return false;
      messages.push(message);
      return true;
    },
    requestPause() {
      if (closed) return false;
      pause = true;
      return true;
    },
    drain,
    pauseRequested: () => pause,
    finish() {
      if (messages.length > 0) return false;
      closed = true;
      return true;
    },
    close() {
      closed = true;
      return drain();
    },
    get closed() {
      return closed;
    },
  };
}
