/**
 * A gRPC call written as raw HTTP/2 frames, for the bytes a hostile client
 * sends and no generated client would: the request messages exactly as
 * given, and the status and `svc-error-bin` trailer exactly as answered.
 */
import http2 from 'node:http2';
import { ERROR_TRAILER } from '../../../src/api/grpc/grpc-errors.js';

export const SERVICE = '/svc.v1.ManagementService/';
/** A raw call that gets no status by then has hung. */
export const RAW_CALL_TIMEOUT_MS = 5_000;

/** One gRPC message: the compressed flag, the length, the bytes. */
export function frame(payload: Uint8Array, compressed = 0): Buffer {
  const out = Buffer.alloc(5 + payload.length);
  out.writeUInt8(compressed, 0);
  out.writeUInt32BE(payload.length, 1);
  out.set(payload, 5);
  return out;
}

export interface RawAnswer {
  grpcStatus: number;
  trailer: Buffer | undefined;
}

export function rawCall(address: string, path: string, frames: Buffer[], headers: http2.OutgoingHttpHeaders = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://${address}`);
    session.on('error', reject);
    const timer = setTimeout(() => {
      session.destroy();
      reject(new Error(`${path}: no status within ${RAW_CALL_TIMEOUT_MS} ms`));
    }, RAW_CALL_TIMEOUT_MS);
    const request = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...headers });
    let fields: http2.IncomingHttpHeaders = {};
    request.on('response', (h) => (fields = { ...fields, ...h }));
    request.on('trailers', (h) => (fields = { ...fields, ...h }));
    request.on('data', () => undefined);
    request.on('error', reject);
    request.on('close', () => {
      clearTimeout(timer);
      session.close();
      const trailer = fields[ERROR_TRAILER];
      resolve({ grpcStatus: Number(fields['grpc-status']), trailer: typeof trailer === 'string' ? Buffer.from(trailer, 'base64') : undefined });
    });
    for (const f of frames) request.write(f);
    request.end();
  });
}
