import autocannon from 'autocannon';
import { DURATION_S, CONNECTIONS, EMBEDDER, type Driver } from './load-config.js';
import { type Version, startServer } from './load-server.js';
import { words, memoryBody, seedMemories, seedDocuments } from './load-client.js';
import { settle } from './load-measures.js';
import type { Row } from './load-scenarios.js';

/** The per-kind cases by autocannon, one kind at a time at each connection count. */
export async function kinds(version: Version, driver: Driver): Promise<Row[]> {
  const server = await startServer(version, driver, EMBEDDER);
  const rows: Row[] = [];
  try {
    await seedMemories(server.base);
    await seedDocuments(server.base);
    const cases = [
      { name: 'memory search', path: '/v1/memories/search', body: () => ({ query: words(4), topK: 10 }) },
      { name: 'knowledge search', path: '/v1/search', body: () => ({ query: words(4), topK: 10 }) },
      { name: 'memory save', path: '/v1/memories', body: (i: number) => memoryBody(`load-${i}`) },
    ];
    for (const spec of cases) {
      for (const connections of CONNECTIONS) {
        await settle(server.base);
        let i = 0;
        const result = await autocannon({
          url: server.base,
          connections,
          duration: Math.min(DURATION_S, 10),
          timeout: 60,
          requests: [
            {
              method: 'POST',
              path: spec.path,
              headers: { 'content-type': 'application/json' },
              setupRequest: (request) => ({ ...request, body: JSON.stringify(spec.body(i++)) }),
            },
          ],
        });
        rows.push({
          version: version.name,
          driver,
          case: spec.name,
          conns: connections,
          'req/s': Math.round(result.requests.average),
          p50: result.latency.p50,
          p99: result.latency.p99,
          'non-2xx': result.non2xx,
          errors: result.errors + result.timeouts,
        });
      }
    }
    return rows;
  } finally {
    await server.stop();
  }
}
