import { Worker } from 'node:worker_threads';
import type { PGlite, QueryOptions, Results, Transaction } from '@electric-sql/pglite';
import { moduleWorkerEntry, siblingUrl } from '../util/module-worker.js';
import {
  fromThreadError,
  type PgliteThreadInit,
  type PgliteThreadReady,
  type PgliteThreadReply,
  type PgliteThreadRequest,
  type ThreadQueryOptions,
} from './pglite-thread-protocol.js';

type Request = PgliteThreadRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;
type Parser = (value: string, typeId: number) => unknown;

/** The part of PGlite's interface this project uses: what drizzle, the migrator and src/db call. */
export type PgliteClient = Pick<PGlite, 'query' | 'exec' | 'transaction' | 'close' | 'dumpDataDir'>;

/**
 * PGlite in a worker thread of its own, behind the part of its interface this project uses.
 *
 * PGlite runs PostgreSQL inside WebAssembly on the thread that calls it: on the server's thread,
 * every statement's execution waits behind the HTTP work and holds it up in turn, so two cores
 * served one thread's worth. Here the statements run on the second core while this thread parses
 * requests, analyses text and embeds. Each statement costs a message each way, and its rows are
 * copied (structured clone) rather than handed over. Under the load mix this took two thirds of
 * the main thread's work and the slowest saves' waits away, but not a request per second more:
 * PGlite's one executor is the bound either way (docs/benchmarks/load.md).
 *
 * Transactions keep PGlite's own semantics: the thread holds PGlite's transaction open between
 * the caller's statements, and other statements wait for it as they would in the same thread.
 * Parsers given with a statement run here, on the raw text the thread returns for their types.
 */
export class PgliteThread implements PgliteClient {
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private nextId = 1;
  private failure: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: PgliteThreadReply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if (reply.ok) waiting.resolve(reply.value);
      else waiting.reject(fromThreadError(reply.error));
    });
    const stop = (error: Error) => {
      this.failure ??= error;
      for (const waiting of this.pending.values()) waiting.reject(this.failure);
      this.pending.clear();
    };
    worker.on('error', (error) => stop(Object.assign(new Error(`PGlite is closed: its thread failed (${error.message})`), { cause: error })));
    worker.on('exit', () => stop(new Error('PGlite is closed')));
    // A reply that cannot be read answers nothing: its caller would wait for ever.
    worker.on('messageerror', (error) =>
      stop(Object.assign(new Error(`PGlite is closed: a reply from its thread could not be read (${error.message})`), { cause: error })),
    );
  }

  /** Starts the thread and opens PGlite in it; fails with PGlite's own error when it cannot open. */
  static async open(init: PgliteThreadInit): Promise<PgliteThread> {
    const entry = moduleWorkerEntry(siblingUrl(import.meta.url, 'pglite-thread-worker'));
    const worker = new Worker(new URL(entry.filename), { workerData: init, ...(entry.execArgv && { execArgv: entry.execArgv }) });
    let onExit!: (code: number) => void;
    let onError!: (error: Error) => void;
    const ready = await new Promise<PgliteThreadReady>((resolve, reject) => {
      onError = reject;
      onExit = (code) => reject(new Error(`PGlite's thread exited (${code}) before opening the database`));
      worker.once('message', resolve);
      worker.once('error', onError);
      worker.once('exit', onExit);
    }).finally(() => {
      worker.off('error', onError);
      worker.off('exit', onExit);
    });
    if (!ready.ready) {
      // Until it has stopped: an error event without a listener would throw in this thread.
      worker.on('error', () => {});
      await worker.terminate();
      throw fromThreadError(ready.error);
    }
    worker.unref();
    return new PgliteThread(worker);
  }

  private call<T>(request: Request, id = this.nextId++): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      // Held only while a statement is out: an idle database keeps no process alive.
      if (this.pending.size === 1) this.worker.ref();
      try {
        this.worker.postMessage({ ...request, id });
      } catch (error) {
        // A value structured clone refuses: nothing was sent.
        this.pending.delete(id);
        if (this.pending.size === 0) this.worker.unref();
        reject(error);
      }
    });
  }

  query<T>(sql: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> {
    return this.runQuery<T>(undefined, sql, params, options);
  }

  exec(sql: string, options?: QueryOptions): Promise<Results[]> {
    return this.runExec(undefined, sql, options);
  }

  private async runQuery<T>(txId: number | undefined, sql: string, params: unknown[], options?: QueryOptions): Promise<Results<T>> {
    const result = await this.call<Results<T>>({
      op: 'query',
      ...(txId !== undefined && { txId }),
      sql,
      params: params.map(exactBytes),
      options: crossing(options),
    });
    return applyParsers(result, options);
  }

  private async runExec(txId: number | undefined, sql: string, options?: QueryOptions): Promise<Results[]> {
    const results = await this.call<Results[]>({ op: 'exec', ...(txId !== undefined && { txId }), sql, options: crossing(options) });
    return results.map((result) => applyParsers(result, options));
  }

  async transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    // The transaction is named by the request that began it.
    const txId = this.nextId++;
    await this.call({ op: 'begin' }, txId);
    let closed = false;
    const open = () => {
      if (closed) throw new Error('Transaction is closed');
    };
    const tx: Transaction = {
      query: async <R>(sql: string, params?: unknown[], options?: QueryOptions) => {
        open();
        return this.runQuery<R>(txId, sql, params ?? [], options);
      },
      sql: () => {
        throw new Error('tagged-template queries are not offered on PGlite in a thread');
      },
      exec: async (sql: string, options?: QueryOptions) => {
        open();
        return this.runExec(txId, sql, options);
      },
      rollback: async () => {
        open();
        await this.call({ op: 'rollback', txId });
        closed = true;
      },
      listen: () => {
        throw new Error('LISTEN is not offered on PGlite in a thread');
      },
      get closed() {
        return closed;
      },
    };
    let result: T;
    try {
      result = await callback(tx);
    } catch (error) {
      closed = true;
      await this.call({ op: 'end', txId, commit: false }).catch(() => {});
      throw error;
    }
    closed = true;
    await this.call({ op: 'end', txId, commit: true });
    return result;
  }

  /** Loads the vector type's binary serializer in the thread (see bindPgliteVectorsAsBinary). */
  async bindVectorsAsBinary(): Promise<void> {
    await this.call({ op: 'bind-vectors' });
  }

  async dumpDataDir(compression: 'none' | 'gzip' | 'auto' = 'auto'): Promise<File | Blob> {
    const { bytes, type } = await this.call<{ bytes: ArrayBuffer; type: string }>({ op: 'dump', compression });
    return new Blob([bytes], { type });
  }

  async close(): Promise<void> {
    if (this.failure) return;
    try {
      await this.call({ op: 'close' });
    } finally {
      await this.worker.terminate();
    }
  }
}

function crossing(options: QueryOptions | undefined): ThreadQueryOptions {
  if (!options) return {};
  if (options.serializers || options.blob || options.onNotice) throw new Error('serializers, blobs and notices are not offered on PGlite in a thread');
  return {
    ...(options.rowMode && { rowMode: options.rowMode }),
    ...(options.paramTypes && { paramTypes: options.paramTypes }),
    ...(options.parsers && { rawTypes: Object.keys(options.parsers).map(Number) }),
  };
}

/**
 * A byte view as its own bytes: structured clone copies a view's whole buffer, and a small Buffer
 * (a vector in binary) is a view into Node's 8 KiB pool.
 */
function exactBytes(value: unknown): unknown {
  return ArrayBuffer.isView(value) && value.byteLength !== value.buffer.byteLength
    ? new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength))
    : value;
}

function applyParsers<T>(result: Results<T>, options: QueryOptions | undefined): Results<T> {
  const parsers = options?.parsers as Record<number, Parser> | undefined;
  if (!parsers) return result;
  const byIndex = options?.rowMode === 'array';
  // By name, a row holds the last of its columns of that name, as PGlite's own rows do.
  const last = new Map(result.fields.map((field, index) => [field.name, index]));
  const columns = result.fields.flatMap((field, index) => {
    const parse = parsers[field.dataTypeID];
    return parse && (byIndex || last.get(field.name) === index) ? [{ index, name: field.name, typeId: field.dataTypeID, parse }] : [];
  });
  if (columns.length === 0) return result;
  for (const row of result.rows as Record<string | number, unknown>[]) {
    for (const column of columns) {
      const key = byIndex ? column.index : column.name;
      const value = row[key];
      if (typeof value === 'string') row[key] = column.parse(value, column.typeId);
    }
  }
  return result;
}
