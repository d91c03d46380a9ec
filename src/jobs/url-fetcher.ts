import { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, type LookupFunction, isIP } from 'node:net';
import type { DocumentFormat } from '../documents/parsers/document-format.js';
import { PermanentJobError } from './job-types.js';

export interface UrlFetcherOptions {
  /** Allows loopback, private, link-local and metadata addresses (tests, a trusted intranet). */
  allowPrivate: boolean;
  maxBytes: number;
  /** For the whole fetch, redirects included. */
  timeoutMs: number;
  maxRedirects: number;
}

export interface FetchedSource {
  content: Uint8Array;
  format: DocumentFormat;
  filename?: string;
}

const FORMAT_OF_TYPE: Record<string, DocumentFormat> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
};

// Where a server-side fetch must not reach: the host itself, private networks, link-local (cloud
// metadata lives at 169.254.169.254 and fd00:ec2::254), and addresses that are not unicast.
const BLOCKED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const)
  BLOCKED.addSubnet(net, bits, 'ipv6');

/** Whether a server-side fetch may connect to `address` (an IP literal). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !BLOCKED.check(address, 'ipv4');
  if (family !== 6) return false;
  const lower = address.toLowerCase();
  // IPv4 inside IPv6 (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d): judged by the IPv4 address.
  const embedded = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (embedded) return isPublicAddress(embedded[1]!);
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const n = (parseInt(hex[1]!, 16) << 16) | parseInt(hex[2]!, 16);
    return isPublicAddress([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'));
  }
  return !BLOCKED.check(address, 'ipv6');
}

/**
 * Fetches a document for an ingest job, with limits on size, time, redirects and content types.
 * Addresses are checked where the connection is made (the resolver the socket uses), so a name
 * that resolves to a private address, or is re-pointed there after a check (DNS rebinding), is
 * refused; every redirect goes through the same check.
 */
export function createUrlFetcher(options: UrlFetcherOptions): (url: string, signal: AbortSignal) => Promise<FetchedSource> {
  const refuse = (message: string) => new PermanentJobError('url_refused', message);

  const checkedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as { address: string; family: number }[];
      const bad = options.allowPrivate ? undefined : list.find((a) => !isPublicAddress(a.address));
      if (bad) return callback(refuse(`${hostname} resolves to ${bad.address}, a private, loopback or link-local address`) as NodeJS.ErrnoException, '', 0);
      if (lookupOptions.all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };

  function get(url: URL, signal: AbortSignal): Promise<http.IncomingMessage> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse(`only http and https URLs are fetched, not ${url.protocol}`);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // An IP literal is connected to without any lookup: checked here instead.
    if (isIP(host) && !options.allowPrivate && !isPublicAddress(host)) throw refuse(`${host} is a private, loopback or link-local address`);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = client.get(
        url,
        { lookup: checkedLookup, signal, headers: { accept: Object.keys(FORMAT_OF_TYPE).join(', '), 'user-agent': 'memrag-ingest' } },
        resolve,
      );
      req.on('error', reject);
    });
  }

  return async (raw, outer) => {
    const signal = AbortSignal.any([outer, AbortSignal.timeout(options.timeoutMs)]);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw refuse(`${JSON.stringify(raw)} is not a URL`);
    }
    try {
      for (let hop = 0; ; hop++) {
        const res = await get(url, signal);
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          if (hop >= options.maxRedirects) throw refuse(`more than ${options.maxRedirects} redirects`);
          url = new URL(res.headers.location, url);
          continue;
        }
        if (status < 200 || status >= 300) {
          res.resume();
          // A server error may pass; a client error (404, 403) will not.
          if (status >= 500 || status === 429) throw new Error(`${url.href} answered ${status}`);
          throw new PermanentJobError('url_failed', `${url.href} answered ${status}`);
        }
        const type = (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        const format = FORMAT_OF_TYPE[type];
        if (!format) {
          res.resume();
          throw new PermanentJobError(
            'unsupported_media_type',
            `${url.href} is ${type || 'of no content type'}; supported: ${Object.keys(FORMAT_OF_TYPE).join(', ')}`,
          );
        }
        const declared = Number(res.headers['content-length'] ?? NaN);
        if (declared > options.maxBytes) {
          res.destroy();
          throw new PermanentJobError('too_large', `${url.href} is ${declared} bytes, over the limit of ${options.maxBytes}`);
        }
        const parts: Buffer[] = [];
        let size = 0;
        for await (const part of res as AsyncIterable<Buffer>) {
          size += part.length;
          if (size > options.maxBytes) {
            res.destroy();
            throw new PermanentJobError('too_large', `${url.href} is over the limit of ${options.maxBytes} bytes`);
          }
          parts.push(part);
        }
        const name = decodeURIComponent(url.pathname.split('/').pop() ?? '');
        return { content: new Uint8Array(Buffer.concat(parts)), format, ...(name ? { filename: name } : {}) };
      }
    } catch (err) {
      if (err instanceof PermanentJobError) throw err;
      // The lookup's refusal arrives wrapped as a request error.
      if ((err as { cause?: unknown })?.cause instanceof PermanentJobError) throw (err as { cause: PermanentJobError }).cause;
      if (outer.aborted) throw err;
      if (signal.aborted) throw new Error(`fetching ${raw} took longer than ${options.timeoutMs} ms`);
      throw err;
    }
  };
}
