import type { ServerType } from '@hono/node-server';

export interface DrainResult {
  /** False when requests were still running at the deadline and their connections were cut. */
  drained: boolean;
}

/**
 * Stops accepting connections and lets the requests in flight, streams included, finish. At the
 * deadline the connections still open are destroyed, which aborts their requests' signals, so
 * LLM calls, tools and searches stop too. Resolves once the server is closed.
 */
export function drainServer(server: ServerType, timeoutMs: number): Promise<DrainResult> {
  const http = 'closeAllConnections' in server ? server : undefined;
  return new Promise((resolve) => {
    let drained = true;
    // A keep-alive connection waiting for its next request would hold close() until its own
    // timeout; closing connections as they go idle lets close() finish with the last response.
    const sweep = setInterval(() => http?.closeIdleConnections(), 100);
    const deadline = setTimeout(() => {
      drained = false;
      http?.closeAllConnections();
    }, timeoutMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(deadline);
      resolve({ drained });
    });
    http?.closeIdleConnections();
  });
}
