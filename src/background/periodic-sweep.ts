export interface PeriodicSweep {
  /** Stops the timer and waits for a sweep under way. */
  stop(): Promise<void>;
}

/** Runs `sweep` every `intervalMs`, one at a time; a failed sweep is reported and the next one tries again. */
export function startPeriodicSweep(sweep: () => Promise<unknown>, intervalMs: number, onError: (err: unknown) => void): PeriodicSweep {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= sweep()
      .then(() => undefined, onError)
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  // Idle sweeps must not keep a process alive that has nothing else to do.
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
