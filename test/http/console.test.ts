import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { CONSOLE_CSP } from '../../src/console/console-csp.js';
import { consoleServerReplySchema } from '../../src/api/schemas/console-schemas.js';
import { createApp, createTestContext } from './http-test-context.js';

describe('GET /console and its assets', () => {
  let ctx: AppContext;
  let app: ReturnType<typeof createApp>;
  beforeAll(async () => {
    ctx = await createTestContext({ API_KEYS: 'acme:console-routes-key' });
    app = createApp(ctx);
  });
  afterAll(() => ctx?.close());

  it('serves the page without a key, under a CSP that allows only its own scripts, styles and API calls', async () => {
    const res = await app.request('/console');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    const page = await res.text();
    expect(page).toContain('<script type="module" src="console/console.js"></script>');
    // Nothing inline for the CSP to refuse, and nothing from another origin.
    expect(page).not.toMatch(/<script>|<style|style=|https?:\/\//);
  });

  it('bundles the browser code into one module, with its packages and no import left for the browser to fetch', async () => {
    const res = await app.request('/console/console.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    const script = await res.text();
    expect(script.length).toBeGreaterThan(10_000);
    expect(script).not.toMatch(/(^|[;\n])import[\s{*"]|\bimport\(|from\s*"(preact|openapi-fetch|eventsource-parser)/);
    expect(script).toContain('/v1/memories');
  });

  it('serves the style sheet', async () => {
    const res = await app.request('/console/console.css');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await res.text()).toContain('@media (max-width');
  });

  it('tells the page whether to ask for a key, while /v1 itself still refuses requests without one', async () => {
    const res = await app.request('/console/server.json');
    const body = await res.json();
    expect(body).toEqual({ apiKeys: true });
    // The declared reply names every field the page reads.
    expect(consoleServerReplySchema.parse(body)).toEqual(body);
    expect((await app.request('/v1/tags')).status).toBe(401);
  });

  it("tells a keyless server's page to open directly", async () => {
    const keyless = await createTestContext();
    try {
      expect(await (await createApp(keyless).request('/console/server.json')).json()).toEqual({ apiKeys: false });
    } finally {
      await keyless.close();
    }
  });
});
