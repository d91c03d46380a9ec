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
const BLOCKED_IPV4: ReadonlyArray<readonly [string, number]> = [
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
];

/**
 * IPv6 prefixes whose last 32 bits are an IPv4 address that the connection reaches: mapped
 * (`::ffff:0:0/96`), translated (`::ffff:0:0:0/96`) and the well-known NAT64 prefix, which an
 * IPv6-only network with DNS64 uses for every public IPv4 host. Judged by that IPv4 address.
 */
const IPV4_IN_IPV6 = ['::ffff:', '::ffff:0:', '64:ff9b::'] as const;

const BLOCKED = new BlockList();
for (const [net, bits] of BLOCKED_IPV4) {
  BLOCKED.addSubnet(net, bits, 'ipv4');
  for (const prefix of IPV4_IN_IPV6) BLOCKED.addSubnet(`${prefix}${net}`, 96 + bits, 'ipv6');
}

const EMBEDS_IPV4 = new BlockList();
for (const prefix of IPV4_IN_IPV6) EMBEDS_IPV4.addSubnet(`${prefix}0.0.0.0`, 96, 'ipv6');

// Outside the prefixes above. `::/8` holds the unspecified and loopback addresses and the
// IPv4-compatible form (`::a.b.c.d`, deprecated); the local-use NAT64 prefix and 6to4 reach IPv4
// hosts through gateways whose side of the network is not ours to judge, as Teredo (`2001::/32`)
// does with an IPv4 address written inverted; `100::/64` discards; `fec0::/10` is site-local.
const BLOCKED_IPV6 = new BlockList();
for (const [net, bits] of [
  ['::', 8],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2002::', 16],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED_IPV6.addSubnet(net, bits, 'ipv6');

/**
 * Whether a server-side fetch may connect to `address` (an IP literal). Decided by `net.BlockList`
 * on the parsed address, never on its spelling, so every written form of one address agrees.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !BLOCKED.check(address, 'ipv4');
  if (family !== 6) return false;
  if (EMBEDS_IPV4.check(address, 'ipv6')) return !BLOCKED.check(address, 'ipv6');
  return !BLOCKED_IPV6.check(address, 'ipv6');
}

/** Why a URL is refused, the same whatever its host resolves to: what a name maps to inside is not the requester's to learn. */
export const NOT_PUBLIC = "the URL's host is not a public address";

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
      // A name that does not resolve is refused as one that resolves inside: told apart, the two
      // would let a requester map which internal names exist.
      if (err && !options.allowPrivate && (err.code === 'ENOTFOUND' || err.code === 'ENODATA')) {
        return callback(refuse(NOT_PUBLIC) as NodeJS.ErrnoException, '', 0);
      }
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as { address: string; family: number }[];
      if (!options.allowPrivate && list.some((a) => !isPublicAddress(a.address))) return callback(refuse(NOT_PUBLIC) as NodeJS.ErrnoException, '', 0);
      if (lookupOptions.all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };

  function get(url: URL, signal: AbortSignal): Promise<http.IncomingMessage> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse(`only http and https URLs are fetched, not ${url.protocol}`);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // An IP literal is connected to without any lookup: checked here instead.
    if (isIP(host) && !options.allowPrivate && !isPublicAddress(host)) throw refuse(NOT_PUBLIC);
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
