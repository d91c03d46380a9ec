import type { Context } from 'hono';
import { isLoopbackHost } from '../config/loopback-host.js';

/**
 * Why a request to a keyless server cannot be taken for its operator's, or undefined when it can.
 * A keyless server listens on loopback only, but a web page open in a local browser reaches
 * loopback too: its cross-site request (a form's text/plain body needs no preflight) could create
 * the first key and lock the operator out, and through DNS rebinding read the secret back. The
 * operator's own clients (the keys CLI, curl) send JSON to a loopback name, without a foreign
 * Origin or a browser's cross-site mark.
 */
export function notTheOperator(c: Context): string | undefined {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `a browser's ${site} request`;
  const origin = c.req.header('origin');
  if (origin !== undefined && !isLoopbackHost(hostnameOf(origin) ?? '')) return `a request from the page at ${origin}`;
  const host = hostnameOf(`http://${c.req.header('host') ?? ''}`);
  if (host !== undefined && !isLoopbackHost(host)) return `a request addressed to ${host}, not a loopback name`;
  if (!(c.req.header('content-type') ?? '').toLowerCase().startsWith('application/json')) return 'a body that is not application/json';
  return undefined;
}

function hostnameOf(url: string): string | undefined {
  try {
    const { hostname } = new URL(url);
    return hostname === '' ? undefined : hostname;
  } catch {
    return undefined;
  }
}
