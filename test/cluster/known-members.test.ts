import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeKnownMembers, encodeKnownMembers, KnownMembersError, knownMembers, rejoinAddresses } from '../../src/cluster/known-members.js';
import type { Member } from '../../src/cluster/member.js';

const member = (node_id: string, state: Member['state']): Member => ({ node_id, address: `${node_id}.example:7946`, grpc_address: '', http_address: '', state, incarnation: 1 });

describe('known members', () => {
  it('keeps every member but ourselves and those that left, and round-trips', () => {
    const known = knownMembers([member('me', 'alive'), member('a', 'alive'), member('b', 'suspect'), member('c', 'dead'), member('d', 'left')], 'me');
    assert.deepEqual(known.map((m) => m.node_id), ['a', 'b', 'c']);
    assert.deepEqual(decodeKnownMembers(encodeKnownMembers(known)), known);
  });

  const bad: Array<[string, string]> = [
    ['not JSON', '{'],
    ['another version', '{"version":2,"members":[]}'],
    ['no members', '{"version":1}'],
    ['a member without an id', '{"version":1,"members":[{"address":"a:1"}]}'],
    ['a member with a bad address', '{"version":1,"members":[{"node_id":"a","address":"nowhere"}]}'],
    ['null', 'null'],
  ];
  for (const [name, text] of bad) {
    it(`refuses ${name}`, () => assert.throws(() => decodeKnownMembers(text), KnownMembersError));
  }

  it('rejoins through the seeds, then the known members, each once, never itself', () => {
    assert.deepEqual(
      rejoinAddresses(['s:1', 'a:1'], [{ node_id: 'a', address: 'a:1' }, { node_id: 'b', address: 'b:1' }, { node_id: 'me', address: 'me:1' }], 'me:1'),
      ['s:1', 'a:1', 'b:1'],
    );
  });
});
