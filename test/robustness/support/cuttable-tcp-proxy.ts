import { type AddressInfo, type Server, type Socket, createServer, connect } from 'node:net';

/**
 * How the database looks while cut: `refuse` is a server that is down (ECONNREFUSED), `reset` one
 * that drops every connection as it comes (ECONNRESET), `blackhole` a network that swallows
 * packets (a connect that never completes).
 */
export type CutMode = 'refuse' | 'reset' | 'blackhole';

export interface CuttableProxy {
  /** `url` with its host and port replaced by the proxy's. */
  proxiedUrl: string;
  /** Connections currently relayed to the database. */
  readonly relayed: number;
  /** Destroys every open connection, and treats new ones as `mode` says until `restore`. */
  cut(mode: CutMode): Promise<void>;
  /**
   * Stops relaying on every open connection without closing it, and holds new ones: a server
   * that hangs. The app's pooled connections look healthy, and whatever it sends waits.
   */
  stall(): void;
  /**
   * After `stall`: the database answers again. Relaying goes on where it stopped, on the
   * connections still open and on those held meanwhile: nothing is cut, whatever the app
   * dropped itself stays dropped.
   */
  resume(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A TCP relay between the app and a PostgreSQL server that a test can cut and restore: the
 * database "stops" for this app alone, while the shared server goes on serving everyone else.
 */
export async function startCuttableProxy(url: string): Promise<CuttableProxy> {
  const target = new URL(url);
  const targetHost = target.hostname || '127.0.0.1';
  const targetPort = Number(target.port || 5432);
  const open = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let mode: CutMode | null = null;
  let relayed = 0;

  // Connections accepted while stalled, not relayed yet.
  const held = new Set<Socket>();

  const server: Server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    if (mode === 'reset') return void client.resetAndDestroy();
    if (mode === 'blackhole') {
      held.add(client);
      client.on('close', () => held.delete(client));
      return;
    }
    relay(client);
  });

  function relay(client: Socket) {
    const upstream = connect(targetPort, targetHost);
    open.add(upstream);
    relayed += 1;
    upstream.on('close', () => {
      open.delete(upstream);
      relayed -= 1;
      client.destroy();
    });
    upstream.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    upstream.on('close', () => pairs.delete(pair));
    client.pipe(upstream);
    upstream.pipe(client);
  }

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);

  const destroyAll = () => {
    // A reset (RST) rather than a FIN: what a crashed server or a dropped route looks like.
    for (const socket of open) socket.resetAndDestroy();
    open.clear();
  };

  return {
    proxiedUrl: proxied.toString(),
    get relayed() {
      return relayed;
    },
    async cut(next) {
      mode = next;
      destroyAll();
      if (next === 'refuse') await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    stall() {
      mode = 'blackhole';
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    resume() {
      mode = null;
      for (const [client, upstream] of pairs) {
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
        upstream.resume();
      }
      for (const client of held) relay(client);
      held.clear();
    },
    async restore() {
      if (mode === 'refuse') await listen(port);
      // Connections held open by the blackhole never reached the database: drop them too.
      if (mode === 'blackhole') destroyAll();
      held.clear();
      mode = null;
    },
    async close() {
      mode = 'reset';
      destroyAll();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
