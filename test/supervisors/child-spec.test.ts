import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  MAX_TIMER_MS,
  abnormalExit,
  createExitSignal,
  normalExit,
  resolveChildSpec,
  shouldRestart,
  type ChildExit,
  type ChildSpec,
  type RestartType,
} from '../../supervisors/index.js';

const start = () => ({ onExit: () => () => {}, stop: () => {}, kill: () => {} });

describe('child specs', () => {
  const table: Array<[RestartType, ChildExit, boolean]> = [
    ['permanent', normalExit(), true],
    ['permanent', abnormalExit('boom'), true],
    ['transient', normalExit(), false],
    ['transient', normalExit('done'), false],
    ['transient', abnormalExit('boom'), true],
    ['temporary', normalExit(), false],
    ['temporary', abnormalExit('boom'), false],
  ];
  for (const [restart, exit, expected] of table) {
    it(`${restart} after a ${exit.kind} exit (${exit.reason}): restart ${expected}`, () => assert.equal(shouldRestart(restart, exit), expected));
  }

  it('defaults follow OTP: permanent worker, 5 s shutdown; supervisors wait for ever', () => {
    assert.deepEqual(resolveChildSpec({ id: 'w', start }), {
      id: 'w',
      start,
      restart: 'permanent',
      kind: 'worker',
      shutdownTimeoutMs: DEFAULT_SHUTDOWN_TIMEOUT_MS,
      startTimeoutMs: Infinity,
    });
    assert.equal(resolveChildSpec({ id: 's', start, kind: 'supervisor' }).shutdownTimeoutMs, Infinity);
    assert.equal(resolveChildSpec({ id: 'k', start, shutdownTimeoutMs: 0 }).shutdownTimeoutMs, 0);
  });

  const invalid: Array<[string, ChildSpec, RegExp]> = [
    ['empty id', { id: '', start }, /id must be a non-empty string/],
    ['no start', { id: 'x', start: undefined as unknown as ChildSpec['start'] }, /"x": start must be a function/],
    ['unknown restart', { id: 'x', start, restart: 'sometimes' as RestartType }, /restart must be one of permanent, transient, temporary/],
    ['unknown kind', { id: 'x', start, kind: 'daemon' as 'worker' }, /kind must be worker or supervisor/],
    ['negative shutdown', { id: 'x', start, shutdownTimeoutMs: -1 }, /shutdownTimeoutMs must be a number of milliseconds >= 0/],
    ['NaN start timeout', { id: 'x', start, startTimeoutMs: Number.NaN }, /startTimeoutMs must be/],
    ['timer overflow', { id: 'x', start, shutdownTimeoutMs: MAX_TIMER_MS + 1 }, /beyond what a timer can wait/],
  ];
  for (const [name, spec, message] of invalid) {
    it(`refuses ${name}`, () => assert.throws(() => resolveChildSpec(spec), message));
  }
});

describe('exit signal', () => {
  it('tells every listener once, and only the first exit counts', () => {
    const signal = createExitSignal();
    const seen: string[] = [];
    signal.onExit((exit) => seen.push(`a ${exit.reason}`));
    const unsubscribe = signal.onExit((exit) => seen.push(`b ${exit.reason}`));
    signal.onExit((exit) => seen.push(`c ${exit.reason}`));
    unsubscribe();
    assert.equal(signal.exit(abnormalExit('boom')), true);
    assert.equal(signal.exit(normalExit()), false);
    assert.deepEqual(seen, ['a boom', 'c boom']);
    assert.deepEqual(signal.exited, { kind: 'abnormal', reason: 'boom' });
  });

  it('replays a past exit at once to a late listener', () => {
    const signal = createExitSignal();
    signal.exit(normalExit('done'));
    let seen: ChildExit | undefined;
    signal.onExit((exit) => (seen = exit));
    assert.deepEqual(seen, { kind: 'normal', reason: 'done' });
  });

  it('keeps the error of an abnormal exit', () => {
    const error = new Error('trap');
    assert.deepEqual(abnormalExit('trap', error), { kind: 'abnormal', reason: 'trap', error });
  });
});
