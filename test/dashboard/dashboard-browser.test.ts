/**
 * The dashboard (issue 44, item 1) driven in a real headless Chromium against
 * a real server process with the example agents: deploy by uploading a
 * `.wasm`, the agent appearing in the table, a message and its reply, a crash
 * on the timeline, the filter, the charts, undeploy, and the controls that
 * follow what the server's API offers; with authentication on, the API key
 * path. One browser for the file, one server per configuration; every wait
 * is for a state of the page, never a sleep.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'puppeteer-core';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { chromiumMissing, launchChromium, watchedPage, type Chromium } from './chromium.js';
import { startSvcProcess, SvcStartError, type SvcProcess } from './svc-process.js';

/** Generous: two cores shared with other test files, and a crash waits for its restart backoff. */
const WAIT = { timeout: 60_000 };
const SUITE = { timeout: 300_000, skip: chromiumMissing() };

async function agentIdOf(page: Page, name: string): Promise<string> {
  const row = await page.waitForSelector(`#agents-table tr[data-agent-name="${name}"]`, WAIT);
  const id = await row?.evaluate((el) => el.getAttribute('data-agent-id'));
  assert.ok(id, `row of ${name} has an agent id`);
  return id;
}

async function deployThroughPage(page: Page, base: string, file: string, name: string): Promise<string> {
  await page.goto(`${base}/#/`);
  const input = await page.waitForSelector('input#deploy-file', WAIT);
  assert.ok(input);
  await input.uploadFile(file);
  await page.type('#deploy-name', name);
  await page.click('#deploy-form button[type="submit"]');
  await page.waitForFunction((n: string) => document.querySelector('#deploy-result')?.textContent?.includes(n) === true, WAIT, name);
  await page.waitForSelector(`#agents-table tr[data-agent-name="${name}"][data-state="running"]`, WAIT);
  return agentIdOf(page, name);
}

async function openAgent(page: Page, base: string, id: string): Promise<void> {
  await page.goto(`${base}/#/agents/${id}`);
  await page.waitForSelector(`[data-view="agent"][data-agent-id="${id}"] #agent-name`, WAIT);
}

async function sendThroughPage(page: Page, type: string, content: string): Promise<void> {
  await page.select('#send-type', type);
  await page.click('#send-content', { count: 3 });
  await page.keyboard.press('Backspace');
  await page.type('#send-content', content);
  await page.click('#send-form button[type="submit"]');
}

describe('the dashboard in Chromium', SUITE, () => {
  let chromium: Chromium;
  let examples: Map<string, string>;
  before(async () => {
    [examples, chromium] = await Promise.all([ensureExamplesBuilt(), launchChromium()]);
  });
  after(() => chromium?.close());

  function example(name: string): string {
    const path = examples.get(name);
    assert.ok(path, `example ${name} is built`);
    return path;
  }

  describe('against a server with authentication off', () => {
    let server: SvcProcess;
    let page: Page;
    let problems: string[];
    /** Set by the test that deploys it. */
    let echoId = '';

    before(async () => {
      server = await startSvcProcess();
      ({ page, problems } = await watchedPage(chromium.browser, server.base));
    });
    after(async () => {
      await page?.close();
      await server?.stop();
    });

    it('loads at / and /dashboard from this server alone, with its stream live and no error', async () => {
      for (const path of ['/dashboard', '/']) {
        const answer = await page.goto(`${server.base}${path}`);
        assert.match(answer?.headers()['content-security-policy'] ?? '', /script-src 'self' 'sha256-/);
        await page.waitForSelector('[data-view="agents"] #agents-table', WAIT);
        await page.waitForSelector('#no-agents', WAIT);
        await page.waitForSelector('#stream-state[data-stream="live"]', WAIT);
      }
      assert.deepEqual([...problems], []);
    });

    it('deploys an uploaded .wasm, which appears in the table, running', async () => {
      const id = await deployThroughPage(page, server.base, example('echo'), 'echo');
      echoId = id;
      const answer = (await (await fetch(`${server.base}/api/v1/agents/${id}`)).json()) as { name: string; state: string };
      assert.deepEqual([answer.name, answer.state], ['echo', 'running']);
      assert.equal(await page.$eval('#agent-count', (el) => el.textContent), '1');
    });

    it('sends a message from the agent page and shows the reply, and both in the message list', async () => {
      await openAgent(page, server.base, echoId);
      await sendThroughPage(page, 'request', 'hello from the browser');
      await page.waitForSelector('#send-reply[data-reply-type="inform"]', WAIT);
      assert.equal(await page.$eval('#send-reply-content', (el) => el.textContent), 'hello from the browser');
      await page.waitForFunction(() => document.querySelectorAll('#messages tr').length >= 2, WAIT);
      const rows = await page.$$eval('#messages tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
      assert.ok(rows.some((r) => r.includes('inform') && r.includes('hello from the browser')), rows.join('\n'));
      assert.ok(rows.some((r) => r.includes('request') && r.includes('hello from the browser')), rows.join('\n'));
    });

    it('shows a crash on the timeline with its reason, then the restart, and the failure as the reply', async () => {
      const id = await deployThroughPage(page, server.base, example('crasher'), 'crasher');
      await openAgent(page, server.base, id);
      await page.waitForSelector('#timeline li[data-kind="deployed"]', WAIT);
      await sendThroughPage(page, 'request', 'crash');
      const crash = await page.waitForSelector('#timeline li[data-kind="crash"]', WAIT);
      assert.match((await crash?.evaluate((el) => el.textContent)) ?? '', /execution crashed: trap: .*unreachable/);
      await page.waitForSelector('#send-reply[data-reply-type="failure"]', WAIT);
      await page.waitForSelector('#timeline li[data-kind="restart"]', WAIT);
      await page.waitForFunction(() => document.querySelector('#agent-restarts')?.textContent === '1', WAIT);
    });

    it('restarts an agent from its page through RestartAgent', async () => {
      const agents = (await (await fetch(`${server.base}/api/v1/agents`)).json()) as { agents: Array<{ agent_id: string; name: string }> };
      const id = agents.agents.find((a) => a.name === 'crasher')?.agent_id ?? '';
      await openAgent(page, server.base, id);
      await page.click('#restart-agent');
      await page.waitForFunction(() => document.querySelector('#action-result')?.textContent === 'Restarted.', WAIT);
      assert.equal(((await (await fetch(`${server.base}/api/v1/agents/${id}`)).json()) as { state: string }).state, 'running');
    });

    it('updates an agent from its page with an uploaded .wasm, keeping its state, and shows the new version', async () => {
      const id = await deployThroughPage(page, server.base, example('counter'), 'counter');
      await openAgent(page, server.base, id);
      await sendThroughPage(page, 'request', 'one');
      await page.waitForFunction(() => document.querySelector('#send-reply-content')?.textContent === '1', WAIT);
      assert.equal(await page.$eval('#agent-module-version', (el) => el.textContent), '1');
      await page.click('#update-agent');
      const input = await page.waitForSelector('input#update-file', WAIT);
      assert.ok(input);
      await input.uploadFile(example('counter-v2'));
      assert.equal(await page.$eval('#update-keep-state', (el) => (el as HTMLInputElement).checked), true);
      await page.type('#update-rollback-window', '5');
      await page.click('#update-form button[type="submit"]');
      await page.waitForFunction(() => document.querySelector('#action-result')?.textContent === 'Updated.', WAIT);
      await page.waitForFunction(() => document.querySelector('#agent-module-version')?.textContent === '2', WAIT);
      await page.waitForSelector('#agent-previous-module', WAIT);
      await page.waitForSelector('#timeline li[data-kind="update"]', WAIT);
      await sendThroughPage(page, 'request', 'two');
      await page.waitForFunction(() => document.querySelector('#send-reply-content')?.textContent === '3', WAIT);
      assert.equal((await fetch(`${server.base}/api/v1/agents/${id}`, { method: 'DELETE' })).status, 200);
    });

    it("follows an agent's log lines over the WebSocket of FollowAgentLogs", async () => {
      const id = await deployThroughPage(page, server.base, example('pong'), 'pong');
      await openAgent(page, server.base, id);
      await page.waitForSelector('#logs-view[data-follow="live"]', WAIT);
      const sent = await fetch(`${server.base}/api/v1/agents/${id}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_type: 'inform', content: 'to the log' }) });
      assert.equal(sent.status, 202);
      await page.waitForFunction(() => document.querySelector('#logs')?.textContent?.includes('pong: ignored inform') === true, WAIT);
      await page.goto(`${server.base}/#/`);
      assert.equal((await fetch(`${server.base}/api/v1/agents/${id}`, { method: 'DELETE' })).status, 200);
    });

    it('filters the table by name and by state', async () => {
      await page.goto(`${server.base}/#/`);
      await page.waitForSelector('#agents-table tr[data-agent-name="crasher"]', WAIT);
      await page.type('#agent-filter', 'crash');
      await page.waitForFunction(() => Array.from(document.querySelectorAll('#agents-table tbody tr')).map((tr) => tr.getAttribute('data-agent-name')).join() === 'crasher', WAIT);
      await page.click('#agent-filter', { count: 3 });
      await page.type('#agent-filter', 'state:failed');
      await page.waitForFunction(() => document.querySelectorAll('#agents-table tbody tr').length === 0, WAIT);
      await page.click('#agent-filter', { count: 3 });
      await page.keyboard.press('Backspace');
      await page.waitForFunction(() => document.querySelectorAll('#agents-table tbody tr').length === 2, WAIT);
    });

    it('charts the message rate, executions, errors, latency and memory as the metrics are polled', async () => {
      await page.goto(`${server.base}/#/metrics`);
      const charts = ['#chart-messages', '#chart-executions', '#chart-errors', '#chart-latency', '#chart-memory'];
      for (const chart of charts) await page.waitForSelector(`${chart} canvas`, WAIT);
      // Two polls make the first point; a third shows the line moving on.
      await page.waitForFunction(() => Number(document.querySelector('#chart-memory')?.getAttribute('data-points')) >= 2, WAIT);
      for (const chart of charts) assert.ok(Number(await page.$eval(chart, (el) => el.getAttribute('data-points'))) >= 2, chart);
    });

    it('offers restart, update and the cluster view exactly when the API document lists them', async () => {
      const doc = (await (await fetch(`${server.base}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId?: string }>> };
      const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, id: op.operationId })));
      await openAgent(page, server.base, echoId);
      await page.waitForSelector('#undeploy-agent', WAIT);
      assert.equal((await page.$('#restart-agent')) !== null, operations.some((op) => op.id === 'RestartAgent'));
      assert.equal((await page.$('#update-agent')) !== null, operations.some((op) => op.id === 'UpdateAgent' || (op.method === 'patch' && /^\/api\/v1\/agents\/\{[^}/]+\}$/.test(op.path))));
      assert.equal((await page.$('a[href="#/cluster"]')) !== null, operations.some((op) => op.path === '/api/v1/cluster/members'));
    });

    it('undeploys after a confirmation, and the agent leaves the table', async () => {
      assert.deepEqual([...problems], []);
      await openAgent(page, server.base, echoId);
      await page.click('#undeploy-agent');
      await page.click('#undeploy-confirm');
      await page.waitForSelector('[data-view="agents"]', WAIT);
      await page.waitForFunction(() => document.querySelector('#agents-table tr[data-agent-name="echo"]') === null, WAIT);
      assert.equal((await fetch(`${server.base}/api/v1/agents/${echoId}`)).status, 404);
      // A poll of the agent in flight while it goes answers 404, which Chromium logs; nothing else may have gone wrong.
      assert.deepEqual(problems.filter((p) => !p.includes('the server responded with a status of 404')), []);
    });
  });

  describe('against a server with authentication on', () => {
    /** An admin key for the server's first start, in the form svc_<key_id>_<secret>. */
    const ADMIN_KEY = `svc_${'abcdefghijklmnop'}_${randomBytes(32).toString('base64url')}`;
    let server: SvcProcess | undefined;
    let unavailable: string | undefined;
    let page: Page;
    let problems: string[];

    before(async () => {
      try {
        server = await startSvcProcess({ SVC_SECURITY_AUTH_ENABLED: 'true', SVC_SECURITY_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY });
      } catch (err) {
        // A server without the security layer refuses these settings, naming them.
        if (!(err instanceof SvcStartError) || !/security\.(auth_enabled|bootstrap_admin_key)/.test(err.output)) throw err;
        unavailable = 'this server has no authentication yet (it refuses security.auth_enabled or security.bootstrap_admin_key): the login and API key path is tested once it has';
        return;
      }
      ({ page, problems } = await watchedPage(chromium.browser, server.base));
    });
    after(async () => {
      await page?.close();
      await server?.stop();
    });

    /** The server's answers to a page without a credential, and the WebSocket it must not open with a key, are expected; nothing else. */
    function unexpected(): string[] {
      return problems.filter((p) => !/status of 401|WebSocket connection/.test(p));
    }

    it('asks for a credential on 401: the browser login, or an API key, which a wrong one does not pass', async (t) => {
      if (server === undefined) return t.skip(unavailable);
      await page.goto(`${server.base}/dashboard`);
      await page.waitForSelector('[data-view="login"] #api-key', WAIT);
      const login = await page.$eval('#login-oidc', (a) => a.getAttribute('href'));
      assert.equal(login, '/api/v1/auth/login?return_to=%2Fdashboard');
      await page.type('#api-key', `svc_${'zzzzzzzzzzzzzzzz'}_${randomBytes(32).toString('base64url')}`);
      await page.click('[data-view="login"] button[type="submit"]');
      await page.waitForFunction(() => document.querySelector('#login-refused')?.textContent?.startsWith('The API key was refused') === true, WAIT);
      assert.equal(await page.evaluate(() => sessionStorage.getItem('svc.dashboard.api_key')), null, 'a refused key is not kept');
      assert.deepEqual(unexpected(), []);
      return undefined;
    });

    it('with a key: lists the agents, polls instead of streaming, and gets a reply through the history', async (t) => {
      if (server === undefined) return t.skip(unavailable);
      const headers = { 'content-type': 'application/json', 'x-api-key': ADMIN_KEY };
      // The admin role does not message agents (DESIGN.md section 9): a key for the page that also holds the agent role.
      const issued = await fetch(`${server.base}/api/v1/keys`, { method: 'POST', headers, body: JSON.stringify({ name: 'dashboard', roles: ['admin', 'agent'] }) });
      assert.equal(issued.status, 201, await issued.clone().text());
      const { api_key } = (await issued.json()) as { api_key: string };
      const deployed = await fetch(`${server.base}/api/v1/agents`, { method: 'POST', headers, body: JSON.stringify({ name: 'echo', wasm_module: readFileSync(example('echo')).toString('base64') }) });
      const { agent_id } = (await deployed.json()) as { agent_id: string };

      await page.click('#api-key', { count: 3 });
      await page.type('#api-key', api_key);
      await page.click('[data-view="login"] button[type="submit"]');
      await page.waitForSelector('#agents-table tr[data-agent-name="echo"][data-state="running"]', WAIT);
      assert.equal(await page.$('[data-view="login"]'), null);
      await page.waitForSelector('#stream-state[data-stream="down"]', WAIT);
      assert.equal(await page.evaluate(() => sessionStorage.getItem('svc.dashboard.api_key')), api_key);

      await openAgent(page, server.base, agent_id);
      await sendThroughPage(page, 'request', 'polled');
      await page.waitForSelector('#send-reply[data-reply-type="inform"]', WAIT);
      assert.equal(await page.$eval('#send-reply-content', (el) => el.textContent), 'polled');

      // The key lasts as long as the tab: a reload keeps it.
      await page.reload();
      await page.waitForSelector(`[data-view="agent"][data-agent-id="${agent_id}"] #agent-name`, WAIT);
      assert.equal(await page.$('[data-view="login"]'), null);
      assert.deepEqual(unexpected(), []);
      return undefined;
    });
  });
});
