import type { Context, MiddlewareHandler } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { errorBody } from '../../api/errors.js';
import { bearerToken } from './api-key-auth.js';
import { TokenBuckets } from './token-buckets.js';

export interface RateLimitOptions {
  perMinute: number;
  /** Requests a client may send at once; default one minute's worth. */
  burst?: number;
  /**
   * Names the bucket of a valid API key (never the key itself: names may end up in a dump), or
   * undefined for anything else, which is then limited by client address. Each valid key has its
   * own budget. Without it, every client is limited by address.
   */
  identifyKey?: (key: string) => Promise<string | undefined>;
  /** Take the client address from the last X-Forwarded-For hop (one trusted proxy in front). */
  trustProxy: boolean;
}

/**
 * 429 with `Retry-After` once a client has spent its tokens. It runs before authentication, so
 * requests with a wrong key are limited by address too, which slows key guessing.
 */
export function rateLimit(options: RateLimitOptions): MiddlewareHandler {
  const { perMinute, trustProxy } = options;
  const buckets = new TokenBuckets(options.burst ?? perMinute, perMinute);

  return async (c, next) => {
    const waitMs = buckets.take(await clientOf(c, options.identifyKey, trustProxy));
    if (waitMs > 0) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      c.header('Retry-After', String(seconds));
      return c.json(errorBody('rate_limited', `Too many requests: the limit is ${perMinute} per minute; retry in ${seconds} s`), 429);
    }
    await next();
  };
}

async function clientOf(c: Context, identifyKey: RateLimitOptions['identifyKey'], trustProxy: boolean): Promise<string> {
  const authorization = c.req.header('authorization');
  const key = authorization && identifyKey ? bearerToken(authorization) : undefined;
  // The authenticator caches its answers, so the key check after this one costs nothing more. A
  // failed lookup (database down) is limited by address; the key check reports the failure.
  const name = key === undefined ? undefined : await identifyKey!(key).catch(() => undefined);
  if (name) return name;
  if (trustProxy) {
    // The last hop is the one our proxy appended; earlier ones are whatever the client claimed.
    const hop = c.req.header('x-forwarded-for')?.split(',').at(-1)?.trim();
    if (hop) return `ip:${hop}`;
  }
  return `ip:${remoteAddress(c) ?? 'unknown'}`;
}

function remoteAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    // No socket behind the request (app.request() in tests, another runtime).
    return undefined;
  }
}
