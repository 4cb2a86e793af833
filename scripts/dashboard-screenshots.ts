/**
 * `npm run docs:screenshots [DIR]`: the dashboard's main views as PNG files
 * for docs/dashboard.md (default DIR: docs/images). A real server process
 * with the example agents and some traffic, photographed by headless
 * Chromium: the agents table, an agent's page after a crash, the charts,
 * and, where the server has authentication, the sign-in panel.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'puppeteer-core';
import { ensureExamplesBuilt } from './build-examples.js';
import { chromiumMissing, launchChromium, watchedPage, type Chromium } from '../test/dashboard/chromium.js';
import { startSvcProcess, SvcStartError, type SvcProcess } from '../test/dashboard/svc-process.js';

const OUT_DIR = resolve(process.argv[2] ?? 'docs/images');
const WAIT = { timeout: 90_000 };
/** A message to echo and counter this often while the charts fill. */
const TRAFFIC_INTERVAL_MS = 40;
/** Metric polls the charts show: 2 s apart, about half a minute. */
const CHART_POINTS = 14;
/** One message in this many makes the `flaky` agent crash, so the errors chart has something to show. */
const CRASH_EVERY = 150;

async function post(base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Record<string, string>> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}

async function shoot(page: Page, name: string): Promise<void> {
  const path = join(OUT_DIR, `dashboard-${name}.png`);
  await page.screenshot({ path });
  console.log(`wrote ${path}`);
}

async function mainViews(chromium: Chromium, examples: Map<string, string>): Promise<void> {
  // Idle agents hibernate after a few seconds, so the table shows more than one state.
  const server = await startSvcProcess({ SVC_RUNTIME_AGENT_IDLE_TIMEOUT: '4s' });
  let traffic: ReturnType<typeof setInterval> | undefined;
  try {
    const ids = new Map<string, string>();
    for (const [name, example] of [['echo', 'echo'], ['counter', 'counter'], ['pong', 'pong'], ['ping', 'ping'], ['crasher', 'crasher'], ['flaky', 'crasher']] as const) {
      const module = readFileSync(examples.get(example) ?? '').toString('base64');
      ids.set(name, (await post(server.base, '/api/v1/agents', { name, wasm_module: module, capabilities: name === 'pong' ? ['game'] : [] })).agent_id ?? '');
    }
    const { page, problems } = await watchedPage(chromium.browser, server.base, 1400, 860);
    await page.goto(`${server.base}/dashboard#/metrics`);
    let n = 0;
    traffic = setInterval(() => {
      n++;
      const [to, content] = n % CRASH_EVERY === 0 ? ['flaky', 'abort'] : n % 3 === 0 ? ['counter', `job ${n}`] : ['echo', `job ${n}`];
      void post(server.base, `/api/v1/agents/${ids.get(to)}/messages`, { message_type: 'request', content }).catch(() => undefined);
    }, TRAFFIC_INTERVAL_MS);
    await post(server.base, `/api/v1/agents/${ids.get('ping')}/messages`, { message_type: 'request', content: `start:${ids.get('pong')}:200` });
    await page.waitForFunction((points: number) => Number(document.querySelector('#chart-memory')?.getAttribute('data-points')) >= points, WAIT, CHART_POINTS);
    await shoot(page, 'metrics');
    clearInterval(traffic);
    traffic = undefined;

    await page.goto(`${server.base}/dashboard#/`);
    await page.waitForSelector('#agents-table tr[data-agent-name="pong"][data-state="hibernated"]', WAIT);
    await shoot(page, 'agents');

    const crasher = ids.get('crasher') ?? '';
    await page.goto(`${server.base}/dashboard#/agents/${crasher}`);
    await page.waitForSelector('#send-form', WAIT);
    for (const content of ['hello', 'crash']) {
      await page.click('#send-content', { count: 3 });
      await page.keyboard.press('Backspace');
      await page.type('#send-content', content);
      await page.click('#send-form button[type="submit"]');
      await page.waitForSelector('#send-reply', WAIT);
    }
    await page.waitForSelector('#timeline li[data-kind="restart"]', WAIT);
    await page.waitForFunction(() => document.querySelector('#agent-name ~ [data-state]')?.getAttribute('data-state') === 'running', WAIT);
    await shoot(page, 'agent');
    if (problems.length > 0) throw new Error(`the page reported problems:\n${problems.join('\n')}`);
  } finally {
    if (traffic !== undefined) clearInterval(traffic);
    await server.stop();
  }
}

async function signIn(chromium: Chromium): Promise<void> {
  let server: SvcProcess;
  try {
    server = await startSvcProcess({ SVC_SECURITY_AUTH_ENABLED: 'true', SVC_SECURITY_BOOTSTRAP_ADMIN_KEY: `svc_abcdefghijklmnop_${randomBytes(32).toString('base64url')}` });
  } catch (err) {
    if (!(err instanceof SvcStartError)) throw err;
    console.log('skipped dashboard-login.png: this server has no authentication yet');
    return;
  }
  try {
    const { page } = await watchedPage(chromium.browser, server.base, 1400, 600);
    await page.goto(`${server.base}/dashboard`);
    await page.waitForSelector('[data-view="login"] #api-key', WAIT);
    await shoot(page, 'login');
  } finally {
    await server.stop();
  }
}

const missing = chromiumMissing();
if (missing !== undefined) {
  console.error(missing);
  process.exit(1);
}
mkdirSync(OUT_DIR, { recursive: true });
const [examples, chromium] = await Promise.all([ensureExamplesBuilt(), launchChromium()]);
try {
  await mainViews(chromium, examples);
  await signIn(chromium);
} finally {
  await chromium.close();
}
