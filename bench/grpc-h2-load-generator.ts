/**
 * A second open-loop client for bench/api-grpc.bench.ts, lighter than the
 * grpc-js client: `SendMessage` calls made straight on a `node:http2`
 * session, each the same pre-encoded request (the 5-byte gRPC frame header
 * and the serialized `SendMessageRequest`), as native load tools such as
 * h2load send them. Each answer is checked as a gRPC client would: HTTP 200,
 * `grpc-status: 0` (in the trailers, or in the headers of a trailers-only
 * answer) and one framed `SendMessageResponse` with a `message_id`.
 *
 * Why a second client: on the 2-vCPU VMs measured here the grpc-js client
 * spends about 300 µs of its own CPU a call and its event loop runs late by
 * several milliseconds at p99, which then sits in every latency it reports.
 * This one does a fraction of that work per call.
 *
 * `node --import tsx bench/grpc-h2-load-generator.ts ADDRESS RATE SECONDS MESSAGE_JSON`
 * prints a `LoadReport` (bench/grpc-load-generator.ts).
 */
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { loadManagementProto, MANAGEMENT_SERVICE_NAME } from '../src/api/proto.js';
import type { MessageInput } from '../src/api/grpc/grpc-client.js';
import { measureLoad } from './grpc-load-generator.js';

interface Codec {
  requestSerialize(value: unknown): Buffer;
  responseDeserialize(bytes: Buffer): unknown;
}

/** The request as it goes on the wire: compression flag 0, 4-byte length, then the message. */
function grpcFrame(message: Uint8Array): Buffer {
  const framed = Buffer.alloc(5 + message.length);
  framed.writeUInt32BE(message.length, 1);
  framed.set(message, 5);
  return framed;
}

/** One unary call on `session`; resolves when a well-formed OK answer has arrived, rejects otherwise. */
function unaryCall(session: ClientHttp2Session, path: string, framed: Buffer, codec: Codec): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: path,
      [constants.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
      te: 'trailers',
    });
    let status: string | undefined;
    let httpStatus = 0;
    const chunks: Buffer[] = [];
    stream.on('response', (headers) => {
      httpStatus = Number(headers[constants.HTTP2_HEADER_STATUS]);
      // A trailers-only answer (an error) carries grpc-status in its headers.
      if (headers['grpc-status'] !== undefined) status = String(headers['grpc-status']);
    });
    stream.on('trailers', (trailers) => (status = String(trailers['grpc-status'])));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('close', () => {
      if (httpStatus !== 200 || status !== '0') return reject(new Error(`call failed: HTTP ${httpStatus}, grpc-status ${status ?? 'none'}`));
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      if (body.length < 5 || body.readUInt32BE(1) !== body.length - 5) return reject(new Error('answer is not one gRPC frame'));
      const answer = codec.responseDeserialize(body.subarray(5)) as { message_id?: string };
      if (typeof answer.message_id !== 'string' || answer.message_id === '') return reject(new Error('answer has no message_id'));
      resolve();
    });
    stream.end(framed);
  });
}

const [address, rate, seconds, message] = process.argv.slice(2);
if (address !== undefined && rate !== undefined && seconds !== undefined && message !== undefined) {
  const codec = loadManagementProto().packageDefinition[MANAGEMENT_SERVICE_NAME] as unknown as { SendMessage: Codec };
  const framed = grpcFrame(codec.SendMessage.requestSerialize({ message: JSON.parse(message) as MessageInput }));
  const path = `/${MANAGEMENT_SERVICE_NAME}/SendMessage`;
  const session = connect(`http://${address}`);
  await new Promise<void>((resolve, reject) => session.once('connect', () => resolve()).once('error', reject));
  const report = await measureLoad(() => unaryCall(session, path, framed, codec.SendMessage), Number(rate), Number(seconds));
  session.close();
  process.stdout.write(JSON.stringify(report));
}
