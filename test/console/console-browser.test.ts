import { mkdir, rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe } from 'vitest';
import { SCREENSHOTS } from './support/console-page.js';
import { type HeadlessChromium, hasChromium, launchChromium } from './support/headless-chromium.js';
import { consoleApprovalCases } from './support/console-approval-cases.js';
import { consoleWithApiKeysCases } from './support/console-keyed-server-cases.js';
import { consoleKeylessServerCases } from './support/console-keyless-server-cases.js';

// In CI a missing browser is a failure (.ci/run installs Debian's chromium); elsewhere the test is skipped.
const runs = hasChromium || process.env.CI === 'true';

describe.runIf(runs)('the console in headless Chromium', () => {
  let browser: HeadlessChromium;
  beforeAll(async () => {
    await rm(SCREENSHOTS, { recursive: true, force: true });
    await mkdir(SCREENSHOTS, { recursive: true });
    console.log(`console screenshots: ${SCREENSHOTS}`);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  consoleWithApiKeysCases(() => browser);
  consoleApprovalCases(() => browser);
  consoleKeylessServerCases(() => browser);
});
