import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { connect, createServer } from 'node:net';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { parseHostPort } from '../../src/cluster/host-port.js';
import { createUdpTcpTransport } from '../../src/cluster/transport-udp-tcp.js';
import type { Transport } from '../../src/cluster/transport.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array) => new TextDecoder().decode(value);

function nextPacket(transport: Transport): Promise<{ text: string; from: string }> {
  return new Promise((resolve) => transport.listen({ packet: (b, from) => resolve({ text: text(b), from }), request: async (b) => bytes(`re: ${text(b)}`) }));
}

describe('UDP+TCP transport', () => {
  it('binds UDP and TCP on the same ephemeral port and carries packets both ways', async () => {
    const a = await createUdpTcpTransport({ bind: '127.0.0.1:0' });
    const b = await createUdpTcpTransport({ bind: '127.0.0.1:0' });
    try {
      assert.match(a.address, /^127\.0\.0\.1:\d+$/);
      assert.notEqual(parseHostPort(a.address).port, 0);
      const atB = nextPacket(b);
      a.sendPacket(b.address, bytes('hello b'));
      assert.deepEqual(await atB, { text: 'hello b', from: a.address }, 'the sender is named by its bound port');
      const atA = nextPacket(a);
      b.sendPacket(a.address, bytes('hello a'));
      assert.equal((await atA).text, 'hello a');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('answers a request over TCP on the same port', async () => {
    const a = await createUdpTcpTransport({ bind: '127.0.0.1:0' });
    const b = await createUdpTcpTransport({ bind: '127.0.0.1:0' });
    b.listen({ packet: () => undefined, request: async (request, from) => bytes(`${text(request)} from ${from.startsWith('127.0.0.1:') ? 'loopback' : from}`) });
    try {
      assert.equal(text(await a.request(b.address, bytes('push-pull'), 2_000)), 'push-pull from loopback');
      const big = new Uint8Array(3 * 1024 * 1024).fill(7);
      b.listen({ packet: () => undefined, request: async (request) => request });
      assert.equal((await a.request(b.address, big, 10_000)).length, big.length, 'frames larger than a TCP segment arrive whole');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a request fails when nobody listens, when no answer comes in time, and when the frame is too large', async () => {
    const a = await createUdpTcpTransport({ bind: '127.0.0.1:0' });
    const silent = await createUdpTcpTransport({ bind: '127.0.0.1:0', maxFrameBytes: 1024 });
    silent.listen({ packet: () => undefined, request: () => new Promise<Uint8Array>(() => undefined) });
    const free = createServer();
    free.listen(0, '127.0.0.1');
    await once(free, 'listening');
    const port = (free.address() as { port: number }).port;
    await new Promise<void>((resolve) => free.close(() => resolve()));
    try {
      await assert.rejects(a.request(`127.0.0.1:${port}`, bytes('x'), 2_000), /ECONNREFUSED/);
      await assert.rejects(a.request(silent.address, bytes('x'), 200), /timed out after 200 ms/);
      await assert.rejects(a.request(silent.address, new Uint8Array(2048), 2_000), /closed before a whole frame|ECONNRESET/);
    } finally {
      await a.close();
      await silent.close();
    }
  });

  it('a connection that sends a header announcing too much is closed without an answer', async () => {
    const errors: Error[] = [];
    const b = await createUdpTcpTransport({ bind: '127.0.0.1:0', maxFrameBytes: 100, onError: (err) => errors.push(err) });
    b.listen({ packet: () => undefined, request: async () => bytes('never') });
    const { host, port } = parseHostPort(b.address);
    const socket = connect({ host, port });
    await once(socket, 'connect');
    const header = Buffer.alloc(4);
    header.writeUInt32BE(1_000_000);
    socket.write(header);
    await once(socket, 'close');
    assert.match(errors[0]?.message ?? '', /exceeds 100/);
    await b.close();
  });

  it('refuses to bind a port taken for UDP, and frees both sockets on close', async () => {
    const udp = createSocket('udp4');
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    const taken = udp.address().port;
    await assert.rejects(createUdpTcpTransport({ bind: `127.0.0.1:${taken}` }), /EADDRINUSE/);
    await new Promise<void>((resolve) => udp.close(() => resolve()));
    const a = await createUdpTcpTransport({ bind: `127.0.0.1:${taken}` });
    assert.equal(a.address, `127.0.0.1:${taken}`);
    await a.close();
    const again = await createUdpTcpTransport({ bind: `127.0.0.1:${taken}` });
    await again.close();
    await assert.rejects(again.request(a.address, bytes('x'), 100), /closed/);
  });
});
