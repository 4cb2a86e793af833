/** Settings that do nothing in the configuration given (src/config/ignored-settings.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';
import { checkIgnoredSettings, SEEDS_WITHOUT_ADDR } from '../../src/config/ignored-settings.js';

test('cluster seeds without a cluster address: one warning; none otherwise', () => {
  const cases: [Record<string, string>, boolean][] = [
    [{}, false],
    [{ SVC_CLUSTER_ADDR: '127.0.0.1:7946' }, false],
    [{ SVC_CLUSTER_SEEDS: '127.0.0.1:7947' }, true],
    [{ SVC_CLUSTER_ADDR: '127.0.0.1:7946', SVC_CLUSTER_SEEDS: '127.0.0.1:7947,127.0.0.1:7948' }, false],
  ];
  for (const [env, warned] of cases) {
    const warnings: { settings: string[]; message: string }[] = [];
    checkIgnoredSettings(loadConfig({ env, cwd: '/' }), (fields, message) => warnings.push({ ...fields, message }));
    assert.deepEqual(warnings.map((w) => w.settings), warned ? [['cluster.seeds']] : [], JSON.stringify(env));
    assert.ok(warnings.every((w) => w.message === SEEDS_WITHOUT_ADDR));
  }
});
