/**
 * One frame each way on a TCP connection: a 4-byte big-endian length, then
 * that many bytes. Enough for the cluster port's exchanges, which are one
 * request and one response per connection.
 */
import type { Socket } from 'node:net';

const LENGTH_BYTES = 4;

export class FrameError extends Error {
  override readonly name = 'FrameError';
}

export function writeFrame(socket: Socket, bytes: Uint8Array): void {
  const header = Buffer.alloc(LENGTH_BYTES);
  header.writeUInt32BE(bytes.length);
  socket.write(header);
  socket.write(bytes);
}

/** Resolves with the first frame; rejects when the connection ends first or the frame is longer than `maxBytes`. */
export function readFrame(socket: Socket, maxBytes: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let expected: number | undefined;
    const finish = (outcome: () => void) => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.off('error', onError);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (expected === undefined && received >= LENGTH_BYTES) {
        expected = Buffer.concat(chunks).readUInt32BE(0);
        if (expected > maxBytes) return finish(() => reject(new FrameError(`frame of ${expected} bytes exceeds ${maxBytes}`)));
      }
      if (expected !== undefined && received >= LENGTH_BYTES + expected) {
        const all = Buffer.concat(chunks);
        const frame = all.subarray(LENGTH_BYTES, LENGTH_BYTES + expected);
        finish(() => resolve(frame));
      }
    };
    const onEnd = () => finish(() => reject(new FrameError('connection closed before a whole frame')));
    const onError = (err: Error) => finish(() => reject(err));
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
    socket.on('error', onError);
  });
}
