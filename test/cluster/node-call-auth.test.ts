import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callKeyFrom, MAC_HEADER, MAX_SKEW_MS, NODE_HEADER, signCall, signFrame, TIME_HEADER, verifyCall, verifyFrame } from '../../src/cluster/node-call-auth.js';

const key = callKeyFrom(new Uint8Array(32).fill(7));
const otherKey = callKeyFrom(new Uint8Array(32).fill(8));
const PATH = '/svc.v1.cluster.ClusterService/Deliver';
const NOW = 1_700_000_000_000;

const headersOf = (entries: Record<string, string>) => ({ get: (name: string) => entries[name] });

describe('node-to-node call proof', () => {
  it('accepts a call signed under the same secret, and refuses every alteration', () => {
    const signed = signCall(key, PATH, 'node-a', NOW, 'body');
    const call = { path: PATH, peer: 'ipv4:10.0.0.2:5000', nowMs: NOW, content: 'body' };
    assert.equal(verifyCall(key, headersOf(signed), call), undefined);
    const cases: Array<[string, Record<string, string>, typeof call]> = [
      ['another secret', signCall(otherKey, PATH, 'node-a', NOW, 'body'), call],
      ['another body', signed, { ...call, content: 'other' }],
      ['another method', signed, { ...call, path: '/svc.v1.cluster.ClusterService/GetAgent' }],
      ['another node named', { ...signed, [NODE_HEADER]: 'node-b' }, call],
      ['no mac', { [NODE_HEADER]: 'node-a', [TIME_HEADER]: String(NOW) }, call],
      ['a replay too late', signed, { ...call, nowMs: NOW + MAX_SKEW_MS + 1 }],
      ['no headers at all', {}, call],
      ['a mac that is not base64 of one', { ...signed, [MAC_HEADER]: '!!!' }, call],
    ];
    for (const [name, headers, attempt] of cases) assert.notEqual(verifyCall(key, headersOf(headers), attempt), undefined, name);
  });

  it('without a secret: loopback peers only', () => {
    const signed = signCall(undefined, PATH, 'node-a', NOW, 'body');
    assert.equal(signed[MAC_HEADER], undefined);
    for (const peer of ['ipv4:127.0.0.1:5000', 'ipv6:[::1]:5000', '127.0.0.2:1']) {
      assert.equal(verifyCall(undefined, headersOf(signed), { path: PATH, peer, nowMs: NOW, content: 'body' }), undefined, peer);
    }
    for (const peer of ['ipv4:10.0.0.2:5000', 'ipv6:[fe80::1]:5000']) {
      assert.match(verifyCall(undefined, headersOf(signed), { path: PATH, peer, nowMs: NOW, content: 'body' }) ?? '', /loopback only/, peer);
    }
  });

  it('a stream frame is proven by its MAC, bound to its stream\'s node and time and to its sequence number', () => {
    const STREAM = '/svc.v1.cluster.ClusterService/DeliverStream';
    const time = String(NOW);
    const mac = signFrame(key, STREAM, 'node-a', time, 3, 'm1\nm2');
    assert.equal(verifyFrame(key, STREAM, 'node-a', time, 3, 'm1\nm2', mac), true);
    const cases: Array<[string, boolean]> = [
      ['another secret', verifyFrame(key, STREAM, 'node-a', time, 3, 'm1\nm2', signFrame(otherKey, STREAM, 'node-a', time, 3, 'm1\nm2'))],
      ['another sequence number', verifyFrame(key, STREAM, 'node-a', time, 4, 'm1\nm2', mac)],
      ['another content', verifyFrame(key, STREAM, 'node-a', time, 3, 'm1', mac)],
      ['another stream time', verifyFrame(key, STREAM, 'node-a', String(NOW + 1), 3, 'm1\nm2', mac)],
      ['another node', verifyFrame(key, STREAM, 'node-b', time, 3, 'm1\nm2', mac)],
      ['no mac', verifyFrame(key, STREAM, 'node-a', time, 3, 'm1\nm2', '')],
    ];
    for (const [name, accepted] of cases) assert.equal(accepted, false, name);
    assert.equal(signFrame(undefined, STREAM, 'node-a', time, 3, 'x'), '');
    assert.equal(verifyFrame(undefined, STREAM, 'node-a', time, 3, 'x', ''), true);
  });
});
