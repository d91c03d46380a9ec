import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type QueryOptions, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import {
  type PgliteThreadInit,
  type PgliteThreadReady,
  type PgliteThreadReply,
  type PgliteThreadRequest,
  type ThreadQueryOptions,
  toThreadError,
} from './pglite-thread-protocol.js';
import { bindPgliteVectorsAsBinary } from './vector-wire-format.js';

/** The thread that hosts PGlite (pglite-thread.ts): each request is one call on it, answered in turn. */

const port = parentPort;
if (!port) throw new Error('pglite-thread-worker runs as a worker thread');
const init = workerData as PgliteThreadInit;

const raw = (value: string) => value;

function queryOptions(options: ThreadQueryOptions): QueryOptions {
  return {
    ...(options.rowMode && { rowMode: options.rowMode }),
    ...(options.paramTypes && { paramTypes: options.paramTypes }),
    ...(options.rawTypes && { parsers: Object.fromEntries(options.rawTypes.map((oid) => [oid, raw])) }),
  };
}

/** An open transaction: its handle, and how to let PGlite's callback return (commit) or throw (roll back). */
interface OpenTransaction {
  tx: Transaction;
  end(commit: boolean): void;
  /** Settles once COMMIT or ROLLBACK has run: rejects with COMMIT's failure. */
  finished: Promise<void>;
}

type ReplyValue = Extract<PgliteThreadReply, { ok: true }>['value'];

const ROLLED_BACK = Symbol('rolled back by the caller');

async function main(): Promise<void> {
  let db: PGlite;
  try {
    db = await PGlite.create({
      ...(init.dataDir && { dataDir: init.dataDir }),
      extensions: { vector },
      ...(init.dataDir && init.sharedBuffers && { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${init.sharedBuffers}`] }),
    });
  } catch (error) {
    port!.postMessage({ ready: false, error: toThreadError(error) } satisfies PgliteThreadReady);
    return;
  }
  const transactions = new Map<number, OpenTransaction>();
  const runner = (txId: number | undefined) => {
    if (txId === undefined) return db;
    const open = transactions.get(txId);
    if (!open) throw new Error('Transaction is closed');
    return open.tx;
  };

  const handle = async (request: PgliteThreadRequest): Promise<ReplyValue> => {
    switch (request.op) {
      case 'query':
        return runner(request.txId).query(request.sql, request.params, queryOptions(request.options));
      case 'exec':
        return runner(request.txId).exec(request.sql, queryOptions(request.options));
      case 'begin': {
        let begun!: () => void;
        const started = new Promise<void>((resolve) => (begun = resolve));
        const finished = db
          .transaction(
            (tx) =>
              new Promise<void>((commit, rollBack) => {
                transactions.set(request.id, { tx, end: (yes) => (yes ? commit() : rollBack(ROLLED_BACK)), finished });
                begun();
              }),
          )
          .catch((error: unknown) => {
            if (error !== ROLLED_BACK) throw error;
          });
        // BEGIN itself can fail (a closed database): then the callback never runs.
        await Promise.race([started, finished]);
        return undefined;
      }
      case 'end': {
        const open = transactions.get(request.txId);
        if (!open) throw new Error('Transaction is closed');
        transactions.delete(request.txId);
        open.end(request.commit);
        await open.finished;
        return undefined;
      }
      case 'rollback': {
        const open = transactions.get(request.txId);
        if (!open) throw new Error('Transaction is closed');
        await open.tx.rollback();
        return undefined;
      }
      case 'bind-vectors':
        await bindPgliteVectorsAsBinary(db);
        return undefined;
      case 'dump': {
        const dump = await db.dumpDataDir(request.compression);
        return { bytes: await dump.arrayBuffer(), type: dump.type };
      }
      case 'close':
        await db.close();
        return undefined;
    }
  };

  const fail = (id: number, error: unknown) => port!.postMessage({ id, ok: false, error: toThreadError(error) } satisfies PgliteThreadReply);
  port!.on('message', (request: PgliteThreadRequest) => {
    handle(request).then(
      (value) => {
        const dumped = value && 'bytes' in value ? [value.bytes] : [];
        try {
          port!.postMessage({ id: request.id, ok: true, value } satisfies PgliteThreadReply, dumped);
        } catch (error) {
          // A result structured clone refuses fails its statement, not the thread.
          fail(request.id, error);
        }
        if (request.op === 'close') port!.close();
      },
      (error: unknown) => fail(request.id, error),
    );
  });
  // A request that cannot be read has no id to answer: its caller learns of it when the thread stops.
  port!.on('messageerror', (error) => {
    throw error;
  });
  port!.postMessage({ ready: true } satisfies PgliteThreadReady);
}

void main();
