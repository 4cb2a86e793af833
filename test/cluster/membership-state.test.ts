import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/clock-simulated.js';
import { createAwareness } from '../../src/cluster/awareness.js';
import { createBroadcastQueue } from '../../src/cluster/broadcast-queue.js';
import { decodePacket, encodePacket } from '../../src/cluster/gossip-codec.js';
import type { GossipMessage } from '../../src/cluster/gossip-messages.js';
import { createMemberTable } from '../../src/cluster/member-table.js';
import { createMembershipState } from '../../src/cluster/membership-state.js';

function setup() {
  const clock = createSimulatedClock(0);
  const table = createMemberTable();
  const queue = createBroadcastQueue({ retransmitMult: 100, memberCount: () => table.count() });
  const awareness = createAwareness(8);
  const direct: Array<[string, GossipMessage]> = [];
  const state = createMembershipState({
    nodeId: 'me',
    addresses: { address: 'me:1', grpc_address: '', http_address: '' },
    clock,
    table,
    queue,
    awareness,
    settings: { probe_interval: 500, gossip_interval: 200, suspicion_mult: 3, suspicion_max_timeout_mult: 6 },
    sendDirect: (to, message) => direct.push([to, message]),
  });
  const queued = () => decodePacket(encodePacket(queue.take(100_000, 3))).map((m) => `${m.kind} ${'node_id' in m ? m.node_id : ''}@${'incarnation' in m ? m.incarnation : ''}`);
  const member = (node_id: string, incarnation = 0) => state.alive({ node_id, incarnation, address: `${node_id}:1`, grpc_address: '', http_address: '' });
  return { clock, table, awareness, direct, state, queued, member };
}

describe('membership state', () => {
  it('stores itself alive at incarnation 0 and announces itself', () => {
    const { table, state, queued } = setup();
    assert.equal(table.get('me')?.state, 'alive');
    state.announce();
    assert.deepEqual(queued(), ['alive me@0']);
  });

  it('refutes a suspicion of itself with a higher incarnation, at a cost to its health', () => {
    const { table, awareness, state, queued } = setup();
    state.suspect({ node_id: 'me', incarnation: 0, from: 'b' });
    assert.equal(state.self.incarnation, 1);
    assert.equal(table.get('me')?.incarnation, 1);
    assert.equal(awareness.score, 1);
    assert.deepEqual(queued(), ['alive me@1']);
    state.dead({ node_id: 'me', incarnation: 5, from: 'b' });
    assert.equal(state.self.incarnation, 6);
  });

  it('re-gossips what it learns, and a suspicion ends in death unless refuted', () => {
    const { clock, table, state, queued } = setup();
    state.alive({ node_id: 'b', incarnation: 0, address: 'b:1', grpc_address: '', http_address: '' });
    state.suspect({ node_id: 'b', incarnation: 0, from: 'c' });
    assert.deepEqual(queued(), ['suspect b@0']);
    clock.increment(1499);
    assert.equal(table.get('b')?.state, 'suspect');
    clock.increment(1);
    assert.equal(table.get('b')?.state, 'dead', 'two members: no confirmations expected, the base timeout of 1.5 s');
    assert.deepEqual(queued(), ['dead b@0']);
  });

  it('a refutation in time cancels the suspicion', () => {
    const { clock, table, state, member } = setup();
    member('b');
    state.suspect({ node_id: 'b', incarnation: 0, from: 'c' });
    clock.increment(1000);
    member('b', 1);
    clock.increment(10_000);
    assert.equal(table.get('b')?.state, 'alive');
  });

  it('answers a stale alive of a dead member with the death it holds, directly and by gossip, once per gossip interval', () => {
    const { clock, direct, state, queued, member } = setup();
    member('b', 3);
    state.dead({ node_id: 'b', incarnation: 3, from: 'c' });
    queued();
    const stale = { node_id: 'b', incarnation: 0, address: 'b:2', grpc_address: '', http_address: '' };
    state.alive(stale);
    state.alive(stale);
    assert.deepEqual(direct, [['b:2', { kind: 'dead', node_id: 'b', incarnation: 3, from: 'me' }]]);
    assert.deepEqual(queued(), ['dead b@3']);
    clock.increment(200);
    state.alive(stale);
    assert.equal(direct.length, 2);
  });

  it('answers a stale accusation of itself with its alive, to the accuser', () => {
    const { direct, state, member } = setup();
    member('c');
    state.suspect({ node_id: 'me', incarnation: 0, from: 'c' });
    state.suspect({ node_id: 'me', incarnation: 0, from: 'c' });
    assert.deepEqual(direct, [['c:1', { kind: 'alive', node_id: 'me', incarnation: 1, address: 'me:1', grpc_address: '', http_address: '' }]]);
  });

  it('merges a push-pull: alive as alive, left as left, dead as its own suspicion', () => {
    const { table, state } = setup();
    state.merge([
      { node_id: 'b', incarnation: 2, address: 'b:1', grpc_address: '', http_address: '', state: 'alive' },
      { node_id: 'c', incarnation: 0, address: 'c:1', grpc_address: '', http_address: '', state: 'alive' },
      { node_id: 'c', incarnation: 0, address: 'c:1', grpc_address: '', http_address: '', state: 'dead' },
      { node_id: 'd', incarnation: 0, address: 'd:1', grpc_address: '', http_address: '', state: 'alive' },
      { node_id: 'd', incarnation: 1, address: 'd:1', grpc_address: '', http_address: '', state: 'left' },
      { node_id: 'e', incarnation: 0, address: 'e:1', grpc_address: '', http_address: '', state: 'dead' },
    ]);
    assert.deepEqual(
      table.all().map((m) => `${m.node_id} ${m.state}`),
      ['me alive', 'b alive', 'c suspect', 'd left'],
    );
  });

  it('leaves: announces its own departure and refutes nothing afterwards', () => {
    const { table, state, queued } = setup();
    let sent = false;
    const message = state.leave(() => (sent = true));
    assert.deepEqual(message, { node_id: 'me', incarnation: 1, from: 'me' });
    assert.equal(table.get('me')?.state, 'left');
    state.suspect({ node_id: 'me', incarnation: 1, from: 'b' });
    assert.equal(state.self.incarnation, 1);
    assert.equal(sent, false);
    assert.deepEqual(queued(), ['dead me@1']);
    assert.equal(sent, true, 'alone, the leave is sent once and done');
  });
});
