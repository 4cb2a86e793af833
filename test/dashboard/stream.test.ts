/** The stream's address and its reconnect delays (dashboard/lib/stream.js). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RECONNECT_MAX_MS, reconnectDelay, streamUrl } from '../../dashboard/lib/stream.js';

describe('stream', () => {
  it('doubles from 500 ms up to its maximum, for ever', () => {
    assert.deepEqual([0, 1, 2, 3, 5, 6, 7, 100, 10_000].map(reconnectDelay), [500, 1000, 2000, 4000, 16_000, RECONNECT_MAX_MS, RECONNECT_MAX_MS, RECONNECT_MAX_MS, RECONNECT_MAX_MS]);
  });
  it('ws on an http page, wss on an https page, the same host and port', () => {
    assert.equal(streamUrl({ protocol: 'http:', host: '127.0.0.1:8080' }, '/api/v1/messages'), 'ws://127.0.0.1:8080/api/v1/messages');
    assert.equal(streamUrl({ protocol: 'https:', host: 'svc.example.com' }, '/api/v1/messages'), 'wss://svc.example.com/api/v1/messages');
  });
});
