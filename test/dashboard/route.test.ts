/** The view a location hash names (dashboard/lib/route.js). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { routeOf } from '../../dashboard/lib/route.js';

describe('routeOf', () => {
  const table: Array<[string, unknown]> = [
    ['', { name: 'agents' }],
    ['#/', { name: 'agents' }],
    ['#/metrics', { name: 'metrics' }],
    ['#/cluster', { name: 'cluster' }],
    ['#/agents/01ABC', { name: 'agent', id: '01ABC' }],
    ['#/agents/a%20b', { name: 'agent', id: 'a b' }],
    ['#/agents/%E0%A4%A', { name: 'agents' }],
    ['#/agents/', { name: 'agents' }],
    ['#/agents/a/b', { name: 'agents' }],
    ['#/elsewhere', { name: 'agents' }],
  ];
  for (const [hash, route] of table) it(`${JSON.stringify(hash)}`, () => assert.deepEqual(routeOf(hash), route));
});
