/**
 * The API reference (`/docs`) of every service works offline: in Chromium (playwright-core driving Debian's
 * `/usr/bin/chromium`, installed by .ci/run) with every request to another host blocked, the page asks for nothing
 * outside the service (no font host, no vendor proxy or registry, no telemetry) and renders the service's operations.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { implementedServices } from '../src/services/index.ts';
import { openApiOf } from './support/openapi.ts';
import { baseUrlOf, startTestPlatform, type TestPlatform } from './support/platform.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('docs: every service reference renders with the network blocked', () => {
  let platform: TestPlatform;
  let browser: Browser;

  before(async () => {
    platform = await startTestPlatform({ services: [...implementedServices], listen: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });
  after(async () => {
    await browser?.close();
    await platform?.close();
  });

  for (const service of implementedServices) {
    test(`${service.name}: /docs asks no other host and shows the operations`, async () => {
      const base = baseUrlOf(platform.app(service.name));
      const doc = await openApiOf(platform, service.name);
      const summaries = Object.values(doc.paths)
        .flatMap((operations) => Object.values(operations))
        .map((op) => (op as { summary?: string }).summary)
        .filter((s): s is string => typeof s === 'string');
      const page = await browser.newPage();
      const elsewhere: string[] = [];
      await page.route('**/*', (route) => {
        const url = new URL(route.request().url());
        if (url.origin === base || url.protocol === 'data:' || url.protocol === 'blob:')
          return route.continue();
        elsewhere.push(url.href);
        return route.abort('blockedbyclient');
      });
      try {
        const res = await page.goto(`${base}/docs`, { waitUntil: 'networkidle' });
        assert.equal(res?.status(), 200);
        // The reference's title, then the operations of its first groups (the sidebar lists them by summary).
        const title = (doc as unknown as { info: { title: string } }).info.title;
        await page.getByRole('heading', { name: title }).first().waitFor({ timeout: 15_000 });
        const text = await page.locator('body').innerText();
        const shown = summaries.filter((s) => text.includes(s));
        assert.ok(shown.length >= 1, 'operations are listed');
        assert.doesNotMatch(text, /Ask AI/, 'no online-only AI button');
        assert.deepEqual(elsewhere, [], 'no request to another host');
      } finally {
        await page.close();
      }
    });
  }
});
