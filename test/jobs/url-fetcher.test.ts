import { describe, expect, it } from 'vitest';
import { PermanentJobError } from '../../src/jobs/job-types.js';
import { NOT_PUBLIC, createUrlFetcher, isPublicAddress } from '../../src/jobs/url-fetcher.js';

const fetcher = createUrlFetcher({ allowPrivate: false, maxBytes: 1_000, timeoutMs: 10_000, maxRedirects: 2 });
const refusal = (url: string) =>
  fetcher(url, new AbortController().signal).then(
    () => undefined,
    (err: unknown) => err,
  );

describe('isPublicAddress', () => {
  // Each row names what the address is, so a failure says which form slipped through.
  const blocked: Array<[string, string]> = [
    ['127.0.0.1', 'IPv4 loopback'],
    ['10.1.2.3', 'IPv4 private'],
    ['169.254.169.254', 'IPv4 link-local (cloud metadata)'],
    ['0.0.0.0', 'IPv4 unspecified'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['::7f00:1', 'IPv4-compatible loopback, hex'],
    ['::127.0.0.1', 'IPv4-compatible loopback, dotted'],
    ['::8.8.8.8', 'IPv4-compatible, deprecated whatever it embeds'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback, dotted'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['0:0:0:0:0:ffff:7f00:0001', 'IPv4-mapped loopback, uncompressed'],
    ['::ffff:0:7f00:1', 'IPv4-translated loopback, hex'],
    ['::ffff:0:127.0.0.1', 'IPv4-translated loopback, dotted'],
    ['::ffff:0:a9fe:a9fe', 'IPv4-translated metadata address'],
    ['64:ff9b::7f00:1', 'NAT64 well-known prefix, loopback'],
    ['64:ff9b::10.0.0.1', 'NAT64 well-known prefix, private'],
    ['64:ff9b:1::7f00:1', 'NAT64 local-use prefix'],
    ['64:ff9b:1:abcd::8.8.8.8', 'NAT64 local-use prefix, whatever it embeds'],
    ['2002:7f00:1::', '6to4 of loopback'],
    ['2002:808:808::1', '6to4, whatever it embeds'],
    ['fec0::1', 'site-local'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo (an inverted IPv4 inside)'],
    ['100::1', 'discard-only'],
    ['FEC0::1', 'site-local, upper case'],
    ['fd00:ec2::254', 'unique local (AWS metadata)'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local with a zone'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['not-an-address', 'not an IP literal'],
  ];
  it.each(blocked)('blocks %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  const open: Array<[string, string]> = [
    ['8.8.8.8', 'IPv4 public'],
    ['1.1.1.1', 'IPv4 public'],
    ['2606:4700::1111', 'IPv6 public'],
    ['2a00:1450:4001:82a::200e', 'IPv6 public'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public'],
    ['::ffff:0:808:808', 'IPv4-translated public'],
    ['64:ff9b::8.8.8.8', 'NAT64 well-known prefix of a public address (DNS64 networks)'],
    ['64:ff9b::101:101', 'NAT64 well-known prefix of a public address, hex'],
  ];
  it.each(open)('keeps %s public (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('URL refusals', () => {
  it('does not say what an internal name resolves to', async () => {
    const err = await refusal('http://localhost:9/x');
    expect(err).toBeInstanceOf(PermanentJobError);
    expect(err).toMatchObject({ code: 'url_refused', message: NOT_PUBLIC });
    expect((err as Error).message).not.toMatch(/127\.0\.0\.1|::1|resolves/);
  });

  it('refuses a name that does not resolve in the same words, so names cannot be told apart', async () => {
    const err = await refusal('http://no-such-host.invalid/x');
    expect(err).toMatchObject({ code: 'url_refused', message: NOT_PUBLIC });
    expect((err as Error).message).not.toMatch(/getaddrinfo|ENOTFOUND|no-such-host/);
  });

  it('refuses an IP literal in the same words', async () => {
    for (const url of ['http://[::ffff:0:7f00:1]/x', 'http://[64:ff9b:1::7f00:1]/x', 'http://[fec0::1]/x', 'http://10.0.0.1/x']) {
      expect(await refusal(url), url).toMatchObject({ code: 'url_refused', message: NOT_PUBLIC });
    }
  });
});
