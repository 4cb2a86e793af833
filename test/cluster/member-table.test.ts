import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemberRecord, MemberState } from '../../src/cluster/member.js';
import { createMemberTable, type MemberChange } from '../../src/cluster/member-table.js';

const record = (node_id: string, state: MemberState, incarnation = 0, address = `${node_id}:1`): MemberRecord => ({
  node_id,
  address,
  grpc_address: '',
  http_address: '',
  state,
  incarnation,
  changed_at: 0,
});

describe('member table', () => {
  it('announces state and address changes with their reason, not incarnation bumps', () => {
    const table = createMemberTable();
    const changes: MemberChange[] = [];
    table.onChange((c) => changes.push(c));
    table.set(record('b', 'alive'), 'joined');
    table.set(record('b', 'alive', 1), 'incarnation');
    table.set(record('b', 'suspect', 1), 'suspected', 'c');
    table.set(record('b', 'alive', 2, 'b:2'), 'refuted');
    table.set(record('b', 'alive', 3, 'b:3'), 'address_changed');
    table.set(record('b', 'dead', 3), 'declared_dead', 'c');
    table.forget('b');
    table.forget('b');
    assert.deepEqual(
      changes.map((c) => [c.node_id, c.from, c.to, c.reason, c.incarnation, c.by ?? '']),
      [
        ['b', 'none', 'alive', 'joined', 0, ''],
        ['b', 'alive', 'suspect', 'suspected', 1, 'c'],
        ['b', 'suspect', 'alive', 'refuted', 2, ''],
        ['b', 'alive', 'alive', 'address_changed', 3, ''],
        ['b', 'alive', 'dead', 'declared_dead', 3, 'c'],
        ['b', 'dead', 'none', 'forgotten', 3, ''],
      ],
    );
    assert.deepEqual(changes[3]?.member, { node_id: 'b', address: 'b:3', grpc_address: '', http_address: '', state: 'alive', incarnation: 3 });
  });

  it('counts members per state', () => {
    const table = createMemberTable();
    table.set(record('a', 'alive'), 'joined');
    table.set(record('b', 'alive'), 'joined');
    table.set(record('c', 'alive'), 'joined');
    table.set(record('c', 'suspect'), 'suspected');
    table.set(record('d', 'alive'), 'joined');
    table.set(record('d', 'left', 1), 'left');
    table.set(record('e', 'alive'), 'joined');
    table.set(record('e', 'dead'), 'declared_dead');
    table.forget('e');
    assert.deepEqual(table.counts(), { alive: 2, suspect: 1, dead: 0, left: 1 });
    assert.equal(table.count(), 3, 'alive and suspect by default');
    assert.equal(table.count(['left', 'dead']), 1);
  });

  it('hands out the same array until the table changes', () => {
    const table = createMemberTable();
    table.set(record('a', 'alive'), 'joined');
    const first = table.all();
    assert.equal(table.all(), first);
    table.set(record('a', 'suspect'), 'suspected');
    assert.notEqual(table.all(), first);
    assert.equal(table.all()[0]?.state, 'suspect');
  });

  it('a listener can unsubscribe', () => {
    const table = createMemberTable();
    let seen = 0;
    const off = table.onChange(() => seen++);
    table.set(record('a', 'alive'), 'joined');
    off();
    table.set(record('a', 'dead'), 'declared_dead');
    assert.equal(seen, 1);
  });
});
