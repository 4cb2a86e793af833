import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemberRecord, MemberState } from '../../src/cluster/member.js';
import { decideAlive, decideDead, decideSuspect, refutingIncarnation, type Decision, type SelfView } from '../../src/cluster/state-decisions.js';

const NOW = 5000;
const self: SelfView = { node_id: 'me', incarnation: 4, addresses: { address: 'me:1', grpc_address: 'me:2', http_address: 'me:3' }, leaving: false };
const leavingSelf: SelfView = { ...self, leaving: true };

const record = (state: MemberState, incarnation: number, address = 'b:1'): MemberRecord => ({
  node_id: 'b',
  address,
  grpc_address: 'b:2',
  http_address: 'b:3',
  state,
  incarnation,
  changed_at: 1000,
});
const alive = (incarnation: number, node_id = 'b', address = 'b:1') => ({ node_id, incarnation, address, grpc_address: node_id === 'me' ? 'me:2' : 'b:2', http_address: node_id === 'me' ? 'me:3' : 'b:3' });
const accusation = (incarnation: number, node_id = 'b', from = 'c') => ({ node_id, incarnation, from });

/** The decision without the record, so tables stay short; the record is checked where it matters. */
function shape(decision: Decision): string {
  switch (decision.action) {
    case 'ignore':
      return `ignore:${decision.why}`;
    case 'refute':
      return `refute:${decision.accused}`;
    case 'set':
      return `set:${decision.member.state}@${decision.member.incarnation}:${decision.reason}`;
    case 'confirm':
      return 'confirm';
    case 'assert':
      return `assert:${decision.to}`;
    case 'reaccuse':
      return `reaccuse:${decision.kind}@${decision.accusation.incarnation}:from ${decision.accusation.from}:to ${decision.to}`;
  }
}

describe('decideAlive', () => {
  const table: Array<[string, MemberRecord | undefined, ReturnType<typeof alive>, SelfView, string]> = [
    ['a new member joins', undefined, alive(0), self, 'set:alive@0:joined'],
    ['a higher incarnation of an alive member is taken', record('alive', 2), alive(3), self, 'set:alive@3:incarnation'],
    ['an equal incarnation of an alive member is stale', record('alive', 2), alive(2), self, 'ignore:stale'],
    ['a lower incarnation of an alive member is stale', record('alive', 2), alive(1), self, 'ignore:stale'],
    ['a suspect refutes with a higher incarnation', record('suspect', 2), alive(3), self, 'set:alive@3:refuted'],
    ['a dead member comes back with a higher incarnation', record('dead', 2), alive(3), self, 'set:alive@3:rejoined'],
    ['a left member comes back with a higher incarnation', record('left', 2), alive(3), self, 'set:alive@3:rejoined'],
    ['an alive at a new address with a higher incarnation moves the member', record('alive', 2), alive(3, 'b', 'b:9'), self, 'set:alive@3:address_changed'],
    ['a stale alive of a suspect is answered with the suspicion', record('suspect', 2), alive(2), self, 'reaccuse:suspect@2:from me:to b:1'],
    ['a stale alive of a dead member is answered with the death (PR #345)', record('dead', 5), alive(0, 'b', 'b:7'), self, 'reaccuse:dead@5:from me:to b:7'],
    ['a stale alive of a left member is answered with its own leave', record('left', 5), alive(1), self, 'reaccuse:dead@5:from b:to b:1'],
    ['our own alive, as we are, changes nothing', undefined, alive(4, 'me', 'me:1'), self, 'ignore:current'],
    ['our own alive at an older incarnation is stale', undefined, alive(3, 'me', 'me:1'), self, 'ignore:stale'],
    ['our own alive with another address is refuted', undefined, alive(4, 'me', 'elsewhere:1'), self, 'refute:4'],
    ['our own alive at a higher incarnation is refuted', undefined, alive(9, 'me', 'me:1'), self, 'refute:9'],
    ['while leaving, nothing about ourselves is refuted', undefined, alive(9, 'me', 'elsewhere:1'), leavingSelf, 'ignore:leaving'],
  ];
  for (const [name, current, message, view, expected] of table) {
    it(name, () => assert.equal(shape(decideAlive(current, message, view, NOW)), expected));
  }

  it('a state change is stamped now; an incarnation bump of an alive member keeps its time', () => {
    const rejoined = decideAlive(record('dead', 2), alive(3), self, NOW);
    assert.equal(rejoined.action === 'set' && rejoined.member.changed_at, NOW);
    const bumped = decideAlive(record('alive', 2), alive(3), self, NOW);
    assert.equal(bumped.action === 'set' && bumped.member.changed_at, 1000);
  });

  it('the new record carries the message addresses', () => {
    const moved = decideAlive(record('alive', 2), { node_id: 'b', incarnation: 3, address: 'x:1', grpc_address: 'x:2', http_address: 'x:3' }, self, NOW);
    assert.deepEqual(moved.action === 'set' && moved.member, { node_id: 'b', incarnation: 3, address: 'x:1', grpc_address: 'x:2', http_address: 'x:3', state: 'alive', changed_at: 1000 });
  });
});

describe('decideSuspect', () => {
  const table: Array<[string, MemberRecord | undefined, ReturnType<typeof accusation>, SelfView, string]> = [
    ['an alive member becomes suspect', record('alive', 2), accusation(2), self, 'set:suspect@2:suspected'],
    ['at a higher incarnation too', record('alive', 2), accusation(3), self, 'set:suspect@3:suspected'],
    ['a stale suspicion changes nothing', record('alive', 2), accusation(1), self, 'ignore:stale'],
    ['a suspicion of a suspect confirms it', record('suspect', 2), accusation(2), self, 'confirm'],
    ['a stale suspicion of a suspect changes nothing', record('suspect', 2), accusation(1), self, 'ignore:stale'],
    ['the dead stay dead', record('dead', 2), accusation(2), self, 'ignore:not_alive'],
    ['the left stay left', record('left', 2), accusation(3), self, 'ignore:not_alive'],
    ['an unknown member is not stored', undefined, accusation(0), self, 'ignore:unknown'],
    ['a suspicion of ourselves is refuted', undefined, accusation(4, 'me'), self, 'refute:4'],
    ['at a higher incarnation too', undefined, accusation(7, 'me'), self, 'refute:7'],
    ['a suspicion of ourselves we already refuted is answered to its sender', undefined, accusation(3, 'me', 'c'), self, 'assert:c'],
    ['an old suspicion of ourselves we raised on ourselves is stale', undefined, accusation(3, 'me', 'me'), self, 'ignore:stale'],
    ['while leaving, a suspicion of ourselves stands', undefined, accusation(9, 'me'), leavingSelf, 'ignore:leaving'],
  ];
  for (const [name, current, message, view, expected] of table) {
    it(name, () => assert.equal(shape(decideSuspect(current, message, view, NOW)), expected));
  }
});

describe('decideDead', () => {
  const table: Array<[string, MemberRecord | undefined, ReturnType<typeof accusation>, SelfView, string]> = [
    ['an alive member is declared dead', record('alive', 2), accusation(2), self, 'set:dead@2:declared_dead'],
    ['a suspect is declared dead', record('suspect', 2), accusation(2), self, 'set:dead@2:declared_dead'],
    ['a member that announces its own death has left', record('alive', 2), accusation(3, 'b', 'b'), self, 'set:left@3:left'],
    ['a stale death changes nothing', record('alive', 3), accusation(2), self, 'ignore:stale'],
    ['the dead die once', record('dead', 2), accusation(4), self, 'ignore:not_alive'],
    ['the left do not become dead', record('left', 2), accusation(4), self, 'ignore:not_alive'],
    ['an unknown member is not stored', undefined, accusation(0), self, 'ignore:unknown'],
    ['a death of ourselves is refuted', undefined, accusation(4, 'me'), self, 'refute:4'],
    ['a death of ourselves we already refuted is answered to its sender', undefined, accusation(2, 'me', 'c'), self, 'assert:c'],
    ['while leaving, our own leave is not refuted', undefined, accusation(5, 'me', 'me'), leavingSelf, 'ignore:leaving'],
  ];
  for (const [name, current, message, view, expected] of table) {
    it(name, () => assert.equal(shape(decideDead(current, message, view, NOW)), expected));
  }

  it('a death from our own suspicion timer carries its reason', () => {
    assert.equal(shape(decideDead(record('suspect', 2), accusation(2, 'b', 'me'), self, NOW, 'suspicion_timeout')), 'set:dead@2:suspicion_timeout');
  });
});

describe('refutingIncarnation', () => {
  const table: Array<[number, number, number]> = [
    [0, 0, 1],
    [4, 2, 5],
    [4, 4, 5],
    [4, 9, 10],
  ];
  for (const [own, accused, expected] of table) {
    it(`own ${own}, accused at ${accused} → ${expected}`, () => assert.equal(refutingIncarnation(own, accused), expected));
  }
});
