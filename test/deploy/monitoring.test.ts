/**
 * What deploy/ ships for Prometheus and Grafana: the alert rules pass
 * `promtool check rules` and their unit tests (`promtool test rules`),
 * including the specification's alert on a message queue above 1,000; every
 * metric the rules and the dashboard name is one a real server serves on
 * its metrics listener; every dashboard query is valid PromQL (promtool
 * checks it as a recording rule) and the dashboard's layout and variables
 * hold together. Without promtool the promtool checks skip, saying so.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { startCliServer, type CliServer } from '../cli/cli-server.js';

const run = promisify(execFile);
const DEPLOY = fileURLToPath(new URL('../../deploy/', import.meta.url));
const ALERTS = join(DEPLOY, 'prometheus', 'alerts.yml');
const DASHBOARD = join(DEPLOY, 'grafana', 'svc-dashboard.json');
const HAS_PROMTOOL = spawnSync('promtool', ['--version']).error === undefined;
const dir = mkdtempSync(join(tmpdir(), 'svc-monitoring-'));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Array<{ refId: string; expr: string; datasource: { uid: string } }>;
}

interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Array<{ name: string }> };
}

const rules = (parseYaml(readFileSync(ALERTS, 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> }).groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));

function promtool(t: TestContext): boolean {
  if (!HAS_PROMTOOL) t.skip('promtool is not installed here: the rules are not checked by promtool');
  return HAS_PROMTOOL;
}

/** Metric names in a PromQL expression: the svc_* and process_* series (label values and functions are not). */
function metricNames(expr: string): string[] {
  const withoutStrings = expr.replace(/"[^"]*"/g, '""');
  return [...new Set(withoutStrings.match(/\b(?:svc|process)_[a-z_]+\b/g) ?? [])];
}

describe('Prometheus alert rules (deploy/prometheus/alerts.yml)', () => {
  it('pass promtool check rules', async (t) => {
    if (!promtool(t)) return;
    const { stdout } = await run('promtool', ['check', 'rules', ALERTS]);
    assert.match(stdout, /SUCCESS: \d+ rules found/);
  });

  it('pass their unit tests (promtool test rules alerts.test.yml)', async (t) => {
    if (!promtool(t)) return;
    const { stdout } = await run('promtool', ['test', 'rules', 'alerts.test.yml'], { cwd: join(DEPLOY, 'prometheus') });
    assert.match(stdout, /SUCCESS/);
  });

  it("hold the specification's alert: the message queue above 1,000", () => {
    const queue = rules.find((r) => r.alert === 'SvcMessageQueueHigh');
    assert.ok(queue);
    assert.equal(queue.expr.trim(), 'svc_message_queue_size > 1000');
    assert.ok(queue.for !== undefined && queue.annotations?.summary !== undefined);
  });

  it('every alert has a severity, a summary and a description', () => {
    for (const rule of rules) {
      assert.ok(rule.alert, 'alerting rules only');
      assert.match(rule.labels?.severity ?? '', /^(critical|warning)$/, rule.alert);
      assert.ok(rule.annotations?.summary && rule.annotations.description, rule.alert);
    }
  });
});

describe('Grafana dashboard (deploy/grafana/svc-dashboard.json)', () => {
  it('has a uid, unique panel ids, panels within 24 columns that do not overlap, and queries on the datasource variable', () => {
    assert.equal(dashboard.uid, 'svc-overview');
    const ids = dashboard.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length);
    const cells = new Set<string>();
    for (const panel of dashboard.panels) {
      const { x, y, w, h } = panel.gridPos;
      assert.ok(x >= 0 && w > 0 && x + w <= 24, `${panel.title} fits 24 columns`);
      for (let row = y; row < y + h; row++) {
        for (let col = x; col < x + w; col++) {
          assert.ok(!cells.has(`${row},${col}`), `${panel.title} overlaps another panel at ${row},${col}`);
          cells.add(`${row},${col}`);
        }
      }
      if (panel.type === 'row') continue;
      assert.ok((panel.targets ?? []).length > 0, `${panel.title} has queries`);
      for (const target of panel.targets ?? []) assert.equal(target.datasource.uid, '${datasource}');
    }
    const variables = dashboard.templating.list.map((v) => v.name);
    assert.deepEqual(variables, ['datasource', 'instance']);
    for (const expr of queries) for (const used of expr.match(/\$(\w+)/g) ?? []) assert.ok(used === '$__rate_interval' || variables.includes(used.slice(1)), `${used} in ${expr}`);
  });

  it('every query is valid PromQL', async (t) => {
    if (!promtool(t)) return;
    const recorded = queries.map((expr, i) => ({ record: `svc_dashboard:query_${i}`, expr: expr.replaceAll('$__rate_interval', '5m').replaceAll('$instance', '.*') }));
    const file = join(dir, 'dashboard-queries.yml');
    writeFileSync(file, toYaml({ groups: [{ name: 'dashboard', rules: recorded }] }));
    const { stdout } = await run('promtool', ['check', 'rules', file]);
    assert.match(stdout, new RegExp(`SUCCESS: ${queries.length} rules found`));
  });
});

describe('the metrics the rules and the dashboard name', { timeout: 240_000 }, () => {
  let s: CliServer;
  let served: Set<string>;
  before(async () => {
    s = await startCliServer();
    const text = await (await fetch(`http://${s.metrics}/metrics`)).text();
    served = new Set<string>();
    for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      served.add(name ?? '');
      if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) served.add(`${name ?? ''}${suffix}`);
    }
  });
  after(() => s.stop());

  it('are all served by a running server', () => {
    const named = [...new Set([...rules.map((r) => r.expr), ...queries].flatMap(metricNames))].sort();
    assert.ok(named.includes('svc_message_queue_size'));
    assert.deepEqual(named.filter((name) => !served.has(name)), []);
  });

  it('the dashboard shows every svc_* metric the server serves', () => {
    const shown = new Set(queries.flatMap(metricNames).map((name) => name.replace(/_(bucket|sum|count)$/, '')));
    const svc = [...served].filter((name) => name.startsWith('svc_') && !/_(bucket|sum|count)$/.test(name));
    assert.deepEqual(svc.filter((name) => !shown.has(name)), []);
  });
});
