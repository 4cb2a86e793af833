import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { checkBindAllowed, checkClusterSettings, openClusterNode } from '../../src/cluster/cluster-node.js';
import { ClusterSettingsError, type ClusterSettings } from '../../src/cluster/cluster-settings.js';
import { DEFAULT_SWIM } from '../../src/cluster/simulation.js';

const base: ClusterSettings = { ...DEFAULT_SWIM, addr: '127.0.0.1:0', advertise_addr: '', seeds: [], node_id: '', secret: '' };
const secret = randomBytes(32).toString('base64');
const keyOf = (err: unknown) => (err instanceof ClusterSettingsError ? err.key : `not a ClusterSettingsError: ${String(err)}`);

describe('cluster node settings', () => {
  const refused: Array<[string, Partial<ClusterSettings>, string]> = [
    ['no address', { addr: '' }, 'cluster.addr'],
    ['a non-loopback address without a secret', { addr: '0.0.0.0:7946', advertise_addr: '10.0.0.1:7946' }, 'cluster.addr'],
    ['a LAN address without a secret', { addr: '192.168.1.10:7946' }, 'cluster.addr'],
    ['a secret that is not 32 bytes', { secret: randomBytes(16).toString('base64') }, 'cluster.secret'],
    ['every interface, advertising nothing', { addr: '0.0.0.0:7946', secret }, 'cluster.advertise_addr'],
    ['a seed that is not host:port', { seeds: ['127.0.0.1'] }, 'cluster.seeds'],
    ['a probe timeout as long as the interval', { probe_timeout: 500, probe_interval: 500 }, 'cluster.probe_timeout'],
  ];
  for (const [name, overrides, key] of refused) {
    it(`refuses ${name}, naming ${key}`, () => {
      let thrown: unknown;
      try {
        checkClusterSettings({ ...base, ...overrides });
      } catch (err) {
        thrown = err;
      }
      assert.equal(keyOf(thrown), key);
    });
  }

  const accepted: Array<[string, Partial<ClusterSettings>]> = [
    ['loopback without a secret', {}],
    ['::1 without a secret', { addr: '[::1]:0' }],
    ['localhost without a secret', { addr: 'localhost:7946' }],
    ['every interface with a secret and an advertised address', { addr: '0.0.0.0:7946', advertise_addr: '10.0.0.1:7946', secret }],
    ['a LAN address with a secret', { addr: '10.1.2.3:7946', secret }],
  ];
  for (const [name, overrides] of accepted) {
    it(`accepts ${name}`, () => assert.doesNotThrow(() => checkClusterSettings({ ...base, ...overrides })));
  }

  it('returns the key of the secret', () => {
    assert.equal(checkClusterSettings(base), undefined);
    assert.equal(Buffer.from(checkClusterSettings({ ...base, secret })!).toString('base64'), secret);
  });

  it('checkBindAllowed alone', () => {
    assert.throws(() => checkBindAllowed('10.0.0.1:1', false), ClusterSettingsError);
    assert.doesNotThrow(() => checkBindAllowed('10.0.0.1:1', true));
  });

  it('refuses before binding anything, and advertises what it bound or what it was told', async () => {
    await assert.rejects(openClusterNode({ ...base, addr: '0.0.0.0:0' }, { nodeId: 'a' }), ClusterSettingsError);
    const plain = await openClusterNode(base, { nodeId: 'a' });
    const told = await openClusterNode({ ...base, advertise_addr: 'node-b.example:7946' }, { nodeId: 'b' });
    try {
      assert.match(plain.address, /^127\.0\.0\.1:[1-9]\d*$/);
      assert.equal(told.address, 'node-b.example:7946');
      assert.equal(told.member('b')?.address, 'node-b.example:7946');
    } finally {
      await plain.stop();
      await told.stop();
    }
  });
});
