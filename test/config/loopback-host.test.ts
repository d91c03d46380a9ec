import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../src/config/loopback-host.js';

describe('isLoopbackHost', () => {
  it('accepts loopback names and addresses only', () => {
    for (const host of ['127.0.0.1', '127.8.9.10', 'localhost', 'LOCALHOST', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', '::ffff:10.0.0.1', 'example.com', 'myhost', '128.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});
