import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSimulatedClock } from '../../supervisors/clock-simulated.js';
import { createMemoryNetwork } from '../../src/cluster/memory-network.js';
import { createSeededRandom } from '../../src/cluster/seeded-random.js';
import { createStallableClock } from '../../src/cluster/stallable-clock.js';
import type { Transport } from '../../src/cluster/transport.js';

function setup(seed = 1) {
  const clock = createSimulatedClock(0);
  const network = createMemoryNetwork({ clock, random: createSeededRandom(seed) });
  const inbox = new Map<string, Array<{ text: string; from: string; at: number }>>();
  const node = (address: string): Transport => {
    const transport = network.attach(address);
    inbox.set(address, []);
    transport.listen({
      packet: (bytes, from) => inbox.get(address)?.push({ text: new TextDecoder().decode(bytes), from, at: clock.now() }),
      request: async (bytes) => new TextEncoder().encode(`re: ${new TextDecoder().decode(bytes)}`),
    });
    return transport;
  };
  return { clock, network, inbox, node };
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe('memory network', () => {
  it('delivers packets after the link delay, naming the sender', () => {
    const { clock, network, inbox, node } = setup();
    const a = node('a:1');
    node('b:1');
    network.setLink('a:1', 'b:1', { delayMs: 25 });
    a.sendPacket('b:1', bytes('hello'));
    clock.increment(24);
    assert.deepEqual(inbox.get('b:1'), []);
    clock.increment(1);
    assert.deepEqual(inbox.get('b:1'), [{ text: 'hello', from: 'a:1', at: 25 }]);
  });

  it('loses packets with the link loss, replayably from the seed', () => {
    const run = (seed: number) => {
      const { clock, network, inbox, node } = setup(seed);
      const a = node('a:1');
      node('b:1');
      network.setDefaults({ loss: 0.3 });
      for (let i = 0; i < 1000; i++) a.sendPacket('b:1', bytes(String(i)));
      clock.increment(10);
      return inbox.get('b:1')!.map((m) => m.text);
    };
    const received = run(5);
    assert.ok(received.length > 650 && received.length < 750, `${received.length} of 1000`);
    assert.deepEqual(run(5), received);
    assert.notDeepEqual(run(6), received);
  });

  it('a one-way cut drops one direction only; heal restores it', () => {
    const { clock, network, inbox, node } = setup();
    const a = node('a:1');
    const b = node('b:1');
    network.cut('a:1', 'b:1');
    a.sendPacket('b:1', bytes('lost'));
    b.sendPacket('a:1', bytes('back'));
    clock.increment(10);
    assert.deepEqual(inbox.get('b:1'), []);
    assert.equal(inbox.get('a:1')?.length, 1);
    network.heal();
    a.sendPacket('b:1', bytes('through'));
    clock.increment(10);
    assert.equal(inbox.get('b:1')?.[0]?.text, 'through');
    assert.deepEqual(network.stats('a:1'), { packetsSent: 2, packetsDelivered: 1, packetsDropped: 1, requests: 0 });
  });

  it('a partition cuts every pair across, both ways, and nothing within', () => {
    const { clock, network, inbox, node } = setup();
    const [a, b, c] = [node('a:1'), node('b:1'), node('c:1')];
    network.partition(['a:1', 'b:1'], ['c:1']);
    a.sendPacket('b:1', bytes('within'));
    a.sendPacket('c:1', bytes('across'));
    c.sendPacket('b:1', bytes('across'));
    void b;
    clock.increment(10);
    assert.deepEqual(inbox.get('b:1')?.map((m) => m.text), ['within']);
    assert.deepEqual(inbox.get('c:1'), []);
  });

  it('a request is answered after a round trip; a cut either way times it out; nobody there refuses it', async () => {
    const { clock, network, node } = setup();
    const a = node('a:1');
    node('b:1');
    network.setDefaults({ delayMs: 5 });
    const answered = a.request('b:1', bytes('ping'), 1000);
    await clock.advance(10);
    assert.equal(new TextDecoder().decode(await answered), 're: ping');

    network.cut('b:1', 'a:1');
    const cut = assert.rejects(a.request('b:1', bytes('ping'), 300), /timed out after 300 ms/);
    await clock.advance(300);
    await cut;

    network.heal();
    const refused = assert.rejects(a.request('nobody:1', bytes('ping'), 1000), /refused/);
    await clock.advance(10);
    await refused;
  });

  it('arrivals at a stalled node wait for the stall to end', () => {
    const clock = createSimulatedClock(0);
    const network = createMemoryNetwork({ clock, random: createSeededRandom(1) });
    const stallable = createStallableClock(clock);
    const received: number[] = [];
    network.attach('slow:1', { clock: stallable }).listen({ packet: () => received.push(clock.now()), request: async () => new Uint8Array(0) });
    const a = network.attach('a:1');
    stallable.stall(1000);
    a.sendPacket('slow:1', bytes('x'));
    clock.increment(999);
    assert.deepEqual(received, []);
    clock.increment(1);
    assert.deepEqual(received, [1000]);
  });

  it('a closed transport receives nothing and its address can be attached again', () => {
    const { clock, network, inbox, node } = setup();
    const a = node('a:1');
    const b = node('b:1');
    void b.close();
    a.sendPacket('b:1', bytes('to nobody'));
    clock.increment(10);
    assert.deepEqual(inbox.get('b:1'), []);
    assert.throws(() => network.attach('a:1'), /already attached/);
    node('b:1');
    a.sendPacket('b:1', bytes('again'));
    clock.increment(10);
    assert.equal(inbox.get('b:1')?.[0]?.text, 'again');
  });
});
