import pg from 'pg';
import type { Db, Tx } from '../../src/db/database.js';

export interface TransactionSpy {
  /** A handle on the database whose transactions are seen, however they start. */
  db: Db;
  /** Transactions begun through `db` so far. */
  transactions(): number;
  /**
   * The statements of each transaction begun on a writer lane's connection, BEGIN to COMMIT or
   * ROLLBACK included, as sent: the round trips a writer held its place for. On a server only.
   */
  relayed(): string[][];
}

type Fn = (...args: unknown[]) => unknown;

const textOf = (query: unknown) => (typeof query === 'string' ? query : ((query as { text?: unknown } | null)?.text ?? ''));

/**
 * Sees the transactions begun through `db`, whichever way they start: `db.transaction` (PGlite,
 * or any caller on the server's pool), or a writer lane's connection (connection-relay.ts), whose
 * BEGIN goes to a connection checked out from the pool behind `$client`. With
 * `afterFirstStatement`, each transaction (numbered from 0 as begun) awaits it once its first
 * statement after BEGIN has answered, before that statement's caller hears of it.
 */
export function spyOnTransactions(db: Db, afterFirstStatement?: (n: number) => Promise<void>): TransactionSpy {
  let begun = 0;
  const relayed: string[][] = [];
  const gateTx = (tx: Tx, n: number): Tx => {
    if (!afterFirstStatement) return tx;
    let first = true;
    return new Proxy(tx, {
      get(t, k, r) {
        const value = Reflect.get(t, k, r) as unknown;
        if (k !== 'execute') return typeof value === 'function' ? (value as Fn).bind(t) : value;
        return async (...args: unknown[]) => {
          const result = await (value as Fn).apply(t, args);
          if (first) {
            first = false;
            await afterFirstStatement(n);
          }
          return result;
        };
      },
    });
  };
  const clients = new WeakMap<pg.PoolClient, pg.PoolClient>();
  const spiedClient = (client: pg.PoolClient): pg.PoolClient => {
    let spied = clients.get(client);
    if (spied) return spied;
    let current: { n: number; first: boolean; statements: string[] } | undefined;
    spied = new Proxy(client, {
      get(c, k) {
        const value = Reflect.get(c, k, c) as unknown;
        if (k !== 'query') return typeof value === 'function' ? (value as Fn).bind(c) : value;
        return async (...args: unknown[]) => {
          const text = String(textOf(args[0]));
          if (/^\s*begin\b/i.test(text)) {
            current = { n: begun++, first: true, statements: [text] };
            relayed.push(current.statements);
            return (value as Fn).apply(c, args);
          }
          current?.statements.push(text);
          if (/^\s*(commit|rollback)\b/i.test(text)) current = undefined;
          const result = await (value as Fn).apply(c, args);
          if (current?.first && afterFirstStatement) {
            current.first = false;
            await afterFirstStatement(current.n);
          }
          return result;
        };
      },
    });
    clients.set(client, spied);
    return spied;
  };
  let pool: pg.Pool | undefined;
  const spiedPool = (target: pg.Pool): pg.Pool =>
    (pool ??= new Proxy(target, {
      get(p, k) {
        const value = Reflect.get(p, k, p) as unknown;
        if (k !== 'connect') return typeof value === 'function' ? (value as Fn).bind(p) : value;
        return async () => spiedClient(await target.connect());
      },
    }));
  const spied = new Proxy(db, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (key === 'transaction') {
        return (work: (tx: Tx) => Promise<unknown>, ...rest: unknown[]) => {
          const n = begun++;
          return (value as Fn).call(target, (tx: Tx) => work(gateTx(tx, n)), ...rest);
        };
      }
      if (key === '$client' && value instanceof pg.Pool) return spiedPool(value);
      return typeof value === 'function' ? (value as Fn).bind(target) : value;
    },
  });
  return { db: spied, transactions: () => begun, relayed: () => relayed };
}
