import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { CONFIG_SCHEMA, type Config } from '../../src/config/schema.js';
import { checkSwimSettings, type ClusterSettings } from '../../src/cluster/cluster-settings.js';
import { retransmitLimit, suspicionTimeoutMs } from '../../src/cluster/formulas.js';

describe('cluster settings in the configuration', () => {
  it('has exactly the names of the cluster contract', () => {
    assert.deepEqual(Object.keys(CONFIG_SCHEMA.cluster), [
      'addr',
      'advertise_addr',
      'seeds',
      'node_id',
      'secret',
      'probe_interval',
      'probe_timeout',
      'indirect_checks',
      'suspicion_mult',
      'suspicion_max_timeout_mult',
      'gossip_interval',
      'gossip_nodes',
      'push_pull_interval',
      'retransmit_mult',
      'awareness_max_multiplier',
      'reconnect_interval',
      'reconnect_timeout',
      'replication_factor',
    ]);
  });

  it('the resolved section is what the membership takes, and its defaults pass its checks', () => {
    const cluster: ClusterSettings = loadConfig({ env: {} }).cluster satisfies Config['cluster'];
    assert.doesNotThrow(() => checkSwimSettings(cluster));
  });

  it('defaults meet the detection target by their formulas: three nodes suspect for 1.5 s, gossip 4 times', () => {
    const c = loadConfig({ env: {} }).cluster;
    assert.equal(suspicionTimeoutMs(c.suspicion_mult, 3, c.probe_interval), 1500);
    assert.equal(retransmitLimit(c.retransmit_mult, 3), 4);
    assert.ok(c.probe_timeout < c.probe_interval);
  });

  it('reads the secret from SVC_CLUSTER_SECRET and refuses one that is not base64 of 32 bytes, naming the key', () => {
    const secret = randomBytes(32).toString('base64');
    assert.equal(loadConfig({ env: { SVC_CLUSTER_SECRET: secret } }).cluster.secret, secret);
    for (const bad of ['short', randomBytes(31).toString('base64'), randomBytes(32).toString('hex')]) {
      assert.throws(
        () => loadConfig({ env: { SVC_CLUSTER_SECRET: bad } }),
        (err: unknown) => err instanceof ConfigError && err.key === 'cluster.secret',
      );
    }
  });

  it('reads durations and bounds counts', () => {
    const c = loadConfig({ env: { SVC_CLUSTER_PROBE_INTERVAL: '1s', SVC_CLUSTER_RECONNECT_TIMEOUT: '1h', SVC_CLUSTER_GOSSIP_NODES: '4' } }).cluster;
    assert.deepEqual([c.probe_interval, c.reconnect_timeout, c.gossip_nodes], [1000, 3_600_000, 4]);
    assert.throws(() => loadConfig({ env: { SVC_CLUSTER_GOSSIP_NODES: '0' } }), (err: unknown) => err instanceof ConfigError && err.key === 'cluster.gossip_nodes');
    assert.throws(() => loadConfig({ env: { SVC_CLUSTER_PROBE_TIMEOUT: '0' } }), (err: unknown) => err instanceof ConfigError && err.key === 'cluster.probe_timeout');
    assert.throws(() => loadConfig({ env: { SVC_CLUSTER_ADVERTISE_ADDR: 'nowhere' } }), (err: unknown) => err instanceof ConfigError && err.key === 'cluster.advertise_addr');
  });
});
