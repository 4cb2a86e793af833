/**
 * Debian's Chromium driven by puppeteer-core: one fresh profile per launch,
 * and the flags that keep Chromium from reaching for the network on its own
 * (this machine refuses those connections, which stalls it). A page opened
 * here records what would make a dashboard test's result a lie: script
 * errors, console errors (CSP violations among them), failed requests and any
 * request that leaves the page's origin.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined when they can. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM_PATH) ? undefined : `Chromium is not installed at ${CHROMIUM_PATH} (Debian's chromium package): the dashboard's browser tests need it`;
}

export interface Chromium {
  readonly browser: Browser;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Chromium> {
  const profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface WatchedPage {
  readonly page: Page;
  /** Everything that went wrong on the page so far, one line each. */
  readonly problems: string[];
}

/** A new page of `width`×`height` that records its problems against `base`'s origin. */
export async function watchedPage(browser: Browser, base: string, width = 1400, height = 900): Promise<WatchedPage> {
  const page = await browser.newPage();
  await page.setViewport({ width, height });
  const origin = new URL(base).origin;
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err instanceof Error ? err.message : String(err)}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} (${request.failure()?.errorText ?? ''})`));
  page.on('request', (request) => {
    const url = new URL(request.url());
    const sameOrigin = url.origin === origin || url.origin === origin.replace(/^http/, 'ws');
    if (!sameOrigin && url.protocol !== 'data:' && url.protocol !== 'blob:') problems.push(`request outside the origin: ${request.url()}`);
  });
  return { page, problems };
}
