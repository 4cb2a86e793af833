import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getStrategy, planRestart, registerStrategy, strategyNames, type ChildState, type PlannedChild, type RestartType } from '../../supervisors/index.js';

const ids = ['a', 'b', 'c', 'd'];

describe('restart strategies', () => {
  const selections: Array<[string, string, string[]]> = [
    ['one_for_one', 'a', ['a']],
    ['one_for_one', 'c', ['c']],
    ['one_for_all', 'a', ['a', 'b', 'c', 'd']],
    ['one_for_all', 'c', ['a', 'b', 'c', 'd']],
    ['rest_for_one', 'a', ['a', 'b', 'c', 'd']],
    ['rest_for_one', 'c', ['c', 'd']],
    ['rest_for_one', 'd', ['d']],
  ];
  for (const [name, failed, expected] of selections) {
    it(`${name}: ${failed} fails → ${expected.join(',')}`, () => {
      assert.deepEqual([...getStrategy(name).select(failed, () => ids)], expected);
    });
  }

  it('one_for_one never walks the children', () => {
    assert.deepEqual([...getStrategy('one_for_one').select('x', () => assert.fail('walked the children'))], ['x']);
  });

  it('registry: built-ins, unknown names, new strategies, no replacing', () => {
    assert.deepEqual(strategyNames().slice(0, 3), ['one_for_one', 'one_for_all', 'rest_for_one']);
    assert.throws(() => getStrategy('simple_one_for_one'), /unknown restart strategy "simple_one_for_one"; known: one_for_one/);
    const lastOnly = { name: 'test_last_only', select: (failed: string) => [failed] };
    registerStrategy(lastOnly);
    assert.equal(getStrategy('test_last_only'), lastOnly);
    assert.throws(() => registerStrategy({ ...lastOnly }), /already registered/);
    assert.throws(() => registerStrategy({ name: 'one_for_one', select: () => [] }), /already registered/);
  });
});

describe('restart plan', () => {
  type Row = [ChildState, RestartType];
  const plan = (strategy: string, failed: string, children: Record<string, Row>) =>
    planRestart(getStrategy(strategy), failed, () => Object.keys(children), (id): PlannedChild | undefined => {
      const row = children[id];
      return row && { state: row[0], spec: { restart: row[1] } };
    });
  const allRunning: Record<string, Row> = { a: ['running', 'permanent'], b: ['running', 'permanent'], c: ['running', 'permanent'], d: ['running', 'permanent'] };

  const cases: Array<[string, string, string, Record<string, Row>, string[], string[]]> = [
    // [name, strategy, failed, children, stop (reverse start order), start (start order)]
    ['one_for_one touches no sibling', 'one_for_one', 'b', allRunning, [], ['b']],
    ['one_for_all stops the others in reverse, starts all in order', 'one_for_all', 'b', allRunning, ['d', 'c', 'a'], ['a', 'b', 'c', 'd']],
    ['rest_for_one stops later ones', 'rest_for_one', 'b', allRunning, ['d', 'c'], ['b', 'c', 'd']],
    ['rest_for_one on the last child', 'rest_for_one', 'd', allRunning, [], ['d']],
    [
      'temporary siblings are stopped, not restarted',
      'one_for_all',
      'a',
      { a: ['restarting', 'permanent'], b: ['running', 'temporary'], c: ['running', 'transient'] },
      ['c', 'b'],
      ['a', 'c'],
    ],
    [
      'stopped and failed siblings stay so',
      'one_for_all',
      'a',
      { a: ['restarting', 'permanent'], b: ['stopped', 'permanent'], c: ['failed', 'permanent'], d: ['running', 'permanent'] },
      ['d'],
      ['a', 'd'],
    ],
    [
      'a starting sibling is stopped and restarted',
      'rest_for_one',
      'a',
      { a: ['restarting', 'permanent'], b: ['starting', 'permanent'] },
      ['b'],
      ['a', 'b'],
    ],
    [
      'a sibling already restarting joins without a stop',
      'one_for_all',
      'b',
      { a: ['restarting', 'permanent'], b: ['restarting', 'permanent'], c: ['stopping', 'permanent'] },
      [],
      ['a', 'b'],
    ],
  ];
  for (const [name, strategy, failed, children, stop, start] of cases) {
    it(name, () => assert.deepEqual(plan(strategy, failed, children), { stop, start }));
  }
});
