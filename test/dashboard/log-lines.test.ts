/** An agent log entry's time and text (dashboard/lib/log-lines.js), whatever the field names. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { logLine } from '../../dashboard/lib/log-lines.js';

describe('logLine', () => {
  const table: Array<[unknown, { at: string | undefined; text: string }]> = [
    ['plain', { at: undefined, text: 'plain' }],
    [{ time: 'T', line: 'abort: x' }, { at: 'T', text: 'abort: x' }],
    [{ created_at: 'T', message: 'm' }, { at: 'T', text: 'm' }],
    [{ at: 'T', text: 't' }, { at: 'T', text: 't' }],
    [{ timestamp: 'T', msg: 'g' }, { at: 'T', text: 'g' }],
    [{ line: 7 }, { at: undefined, text: '{"line":7}' }],
    [42, { at: undefined, text: '42' }],
    [null, { at: undefined, text: 'null' }],
  ];
  for (const [entry, expected] of table) it(JSON.stringify(entry), () => assert.deepEqual(logLine(entry), expected));
});
