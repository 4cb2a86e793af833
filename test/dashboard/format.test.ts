/** How the dashboard writes figures (dashboard/lib/format.js). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatBytes, formatNumber, formatSeconds, formatTime, partyName, shortId } from '../../dashboard/lib/format.js';

describe('format', () => {
  it('bytes', () => {
    assert.deepEqual([0, 512, 1024, 1536, 65536, 64 * 1024 * 1024, 5 * 1024 ** 3].map(formatBytes), ['0 B', '512 B', '1.0 KiB', '1.5 KiB', '64 KiB', '64 MiB', '5.0 GiB']);
  });
  it('seconds', () => {
    assert.deepEqual([0, 0.35, 1.234, 12.34, 200, 7500].map(formatSeconds), ['0 s', '350 ms', '1.23 s', '12.3 s', '3 min 20 s', '2 h 5 min']);
  });
  it('numbers', () => {
    assert.deepEqual([0, 0.012345, 3.14159, 42.42, 1234.5].map(formatNumber), ['0', '0.0123', '3.14', '42.4', '1,235']);
  });
  it('times, to the millisecond, and what is not a time as it is', () => {
    const at = new Date(2026, 0, 2, 3, 4, 5, 67).toISOString();
    assert.equal(formatTime(at), '03:04:05.067');
    assert.equal(formatTime('soon'), 'soon');
  });
  it('ids and parties', () => {
    assert.equal(shortId('01M8G9SCR9J1ZVNPNDG5RTMYFF'), '…G5RTMYFF');
    assert.equal(shortId('short'), 'short');
    const names = new Map([['01AAAAAAAAAAAA', 'echo']]);
    const nameOf = (id: string): string | undefined => names.get(id);
    assert.deepEqual(['01AAAAAAAAAAAA', '01BBBBBBBBBBBB', 'client:anonymous', 'platform'].map((p) => partyName(p, nameOf)), ['echo', '…BBBBBBBB', 'client:anonymous', 'platform']);
  });
});
