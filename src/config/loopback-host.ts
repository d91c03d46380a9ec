import { isIP } from 'node:net';

/**
 * Whether listening on `host` serves this machine only: `localhost`, 127.0.0.0/8 or ::1
 * (IPv4-mapped included). Anything else, `0.0.0.0` and names of this host included, may be
 * reachable from elsewhere.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) {
    // The URL parser writes IPv6 in its one compressed form: ::1, and ::ffff:7fxx:xxxx for 127/8.
    const compressed = new URL(`http://[${h}]/`).hostname;
    return compressed === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(compressed);
  }
  return false;
}
