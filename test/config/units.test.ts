import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDuration, formatSize, parseCpu, parseDuration, parseSize } from '../../src/config/units.js';

describe('units', () => {
  const durations: Array<[string | number, number | undefined]> = [
    ['500ms', 500], ['30s', 30_000], ['5m', 300_000], ['1h', 3_600_000], ['30d', 2_592_000_000],
    ['250', 250], [250, 250], ['1.5s', 1500], [' 2s ', 2000],
    ['', undefined], ['s', undefined], ['-1s', undefined], ['1w', undefined], ['1 s s', undefined], [-5, undefined], [Number.NaN, undefined],
  ];
  for (const [input, expected] of durations) {
    it(`duration ${JSON.stringify(input)} → ${String(expected)}`, () => assert.equal(parseDuration(input), expected));
  }

  const sizes: Array<[string | number, number | undefined]> = [
    ['512MB', 512_000_000], ['64KiB', 65_536], ['10MiB', 10_485_760], ['1GiB', 1_073_741_824], ['1000', 1000], [4096, 4096], ['2kb', 2000],
    ['', undefined], ['MB', undefined], ['1.5', 2], ['1 parsec', undefined], [1.5, undefined], [-1, undefined],
  ];
  for (const [input, expected] of sizes) {
    it(`size ${JSON.stringify(input)} → ${String(expected)}`, () => assert.equal(parseSize(input), expected));
  }

  const cpus: Array<[string | number, number | undefined]> = [['100m', 100], ['1500m', 1500], ['2', 2000], [0.5, 500], ['1c', undefined], ['', undefined]];
  for (const [input, expected] of cpus) {
    it(`cpu ${JSON.stringify(input)} → ${String(expected)}`, () => assert.equal(parseCpu(input), expected));
  }

  it('formats durations and sizes in their largest exact unit, and they parse back', () => {
    for (const ms of [1, 999, 1000, 60_000, 90_000, 3_600_000, 86_400_000]) assert.equal(parseDuration(formatDuration(ms)), ms);
    for (const bytes of [1, 1000, 1024, 65_536, 10_485_760, 1_073_741_824]) assert.equal(parseSize(formatSize(bytes)), bytes);
    assert.equal(formatDuration(30_000), '30s');
    assert.equal(formatSize(10 * 1024 * 1024), '10MiB');
  });
});
