/** Settings the schema has but this version cannot honour (src/config/unavailable-settings.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';
import { checkUnavailableSettings } from '../../src/config/unavailable-settings.js';
import { capturedLogger } from '../telemetry/telemetry-fixtures.js';

const WARNING = 'clustering is not available in this version; this node runs alone';

test('cluster settings: one warning names those given; none when none is', () => {
  const cases: [Record<string, string>, string[] | undefined][] = [
    [{}, undefined],
    [{ SVC_CLUSTER_ADDR: '127.0.0.1:7946' }, ['cluster.addr']],
    [{ SVC_CLUSTER_SEEDS: '127.0.0.1:7947' }, ['cluster.seeds']],
    [{ SVC_CLUSTER_ADDR: '127.0.0.1:7946', SVC_CLUSTER_SEEDS: '127.0.0.1:7947,127.0.0.1:7948' }, ['cluster.addr', 'cluster.seeds']],
  ];
  for (const [env, expected] of cases) {
    const { log, capture } = capturedLogger();
    checkUnavailableSettings(loadConfig({ env, cwd: '/' }), log);
    const warnings = capture.records().filter((r) => r.msg === WARNING);
    assert.deepEqual(warnings.map((r) => r.settings), expected === undefined ? [] : [expected], JSON.stringify(env));
    assert.ok(warnings.every((r) => r.level === 40));
  }
});
