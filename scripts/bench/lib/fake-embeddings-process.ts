/**
 * The test suite's fake OpenAI-compatible embeddings endpoint as a process of its own, for
 * `bench:load` with BENCH_EMBEDDER=fake: in the bench's process it would wait behind
 * autocannon's event loop and its latency would be the load generator's, not the endpoint's.
 * Prints its base URL, then serves until SIGTERM.
 */
import { startFakeEmbeddingsServer } from '../../../testkit/fake-embeddings-server.js';

const server = await startFakeEmbeddingsServer();
// Nothing reads what was asked; over a long run the record would only grow.
setInterval(() => server.requests.splice(0), 1000).unref();
console.log(server.baseURL);
process.once('SIGTERM', () => void server.close().finally(() => process.exit(0)));
