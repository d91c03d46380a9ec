import { setImmediate as nextTurnOfTheLoop } from 'node:timers/promises';
import type { PGlite } from '@electric-sql/pglite';
import { inUrgentReads } from './urgent-reads.js';

/**
 * PGlite runs each statement inside WebAssembly on the process's own thread, and an in-memory one
 * answers through promises alone: a chain of statements (a turn's bookkeeping after the model has
 * answered) never lets the event loop reach its I/O phase, so replies already written (a stream's
 * first chunks, another request's JSON) wait on the socket until the whole chain is done. Each
 * statement first waits for the loop's next turn, so pending I/O goes out between statements.
 * Statements still reach PGlite's own queue in the order they were issued, except a search's
 * (`asUrgentReads`), which go at once: under load a turn of the loop runs every other request's
 * pending work, and a search of three statements waited for three of them. Its chain is short.
 */
export function yieldBeforeStatements(client: PGlite): PGlite {
  const query = client.query.bind(client);
  const exec = client.exec.bind(client);
  const transaction = client.transaction.bind(client);
  client.query = (async (...args: Parameters<typeof query>) => {
    await yieldUnlessUrgent();
    return query(...args);
  }) as typeof client.query;
  client.exec = async (...args: Parameters<typeof exec>) => {
    await yieldUnlessUrgent();
    return exec(...args);
  };
  client.transaction = (async (...args: Parameters<typeof transaction>) => {
    await yieldUnlessUrgent();
    return transaction(...args);
  }) as typeof client.transaction;
  return client;
}

async function yieldUnlessUrgent(): Promise<void> {
  if (!inUrgentReads()) await nextTurnOfTheLoop();
}
