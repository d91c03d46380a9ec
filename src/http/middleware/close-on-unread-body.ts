import type { IncomingMessage } from 'node:http';
import type { HttpBindings } from '@hono/node-server';
import type { MiddlewareHandler } from 'hono';

/**
 * Answers `Connection: close` when a request is answered before its body was read to the end: a
 * 413 on the declared length, a 401 or 429 before the route, a 400 on the query string, a 404 on
 * a path nothing serves. The rest of that body is still on the connection. @hono/node-server
 * drains it after the reply, but its drain stalls behind the request's stream adapter and gives
 * up by destroying the socket half a second later, while the client, told keep-alive, sends its
 * next request down it ("other side closed"). Told to close, the client opens a fresh connection.
 *
 * Only under @hono/node-server over HTTP/1 (whose request is in `c.env`); `app.request()` has none.
 */
export const closeOnUnreadBody: MiddlewareHandler = async (c, next) => {
  await next();
  const incoming = (c.env as Partial<HttpBindings> | undefined)?.incoming;
  if (incoming?.httpVersionMajor === 1 && !incoming.readableEnded && declaresBody(incoming)) c.header('Connection', 'close');
};

/** A length of 0 leaves nothing on the wire to poison the next request. */
function declaresBody(incoming: IncomingMessage): boolean {
  const length = incoming.headers['content-length'];
  return incoming.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
