import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, type Page, type Request, chromium } from 'playwright-core';

/** Debian's chromium package (.ci/run installs it); never a browser that playwright downloads. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const hasChromium = existsSync(CHROMIUM_PATH);

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface HeadlessChromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile, removed on close. */
export async function launchChromium(): Promise<HeadlessChromium> {
  const profile = await mkdtemp(join(tmpdir(), 'memrag-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    args: ARGS,
    headless: true,
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/**
 * What a page reported as wrong: console errors, uncaught exceptions and CSP violations (also
 * caught from the document's `securitypolicyviolation` event, in case a violation is not logged).
 */
export async function watchPageErrors(page: Page): Promise<string[]> {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') errors.push(`console.${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
  // A string: it runs in the page, and this project's typecheck has no DOM types.
  await page.addInitScript({
    content:
      "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline')));",
  });
  return errors;
}

/**
 * The page's requests, so that a test that times out waiting for something can say whether the
 * request behind it failed, never returned, or returned something else: `report()` lists each
 * (method, path, status or failure, milliseconds), those still pending last.
 */
export function traceRequests(page: Page): { report(): string } {
  const done: string[] = [];
  const pending = new Map<Request, number>();
  const line = (request: Request, outcome: string) =>
    `${request.method()} ${request.url().replace(/^https?:\/\/[^/]+/, '')} ${outcome} ${Date.now() - (pending.get(request) ?? Date.now())} ms`;
  page.on('request', (request) => pending.set(request, Date.now()));
  page.on('requestfinished', (request) => {
    void request.response().then((response) => {
      done.push(line(request, String(response?.status() ?? '?')));
      pending.delete(request);
    });
  });
  page.on('requestfailed', (request) => {
    done.push(line(request, `FAILED ${request.failure()?.errorText ?? ''}`));
    pending.delete(request);
  });
  return { report: () => [...done, ...[...pending.keys()].map((request) => line(request, 'PENDING'))].join('\n') };
}
