/**
 * The proof a node-to-node gRPC call carries (cluster.proto): the calling
 * node, the time, and an HMAC-SHA256 of the method, both of those and the
 * request's content under a key derived from cluster.secret (HKDF, so the
 * gossip key and this one differ). A call whose time is more than
 * `MAX_SKEW_MS` away from the receiver's clock is refused, which bounds a
 * replay. Without a secret the cluster runs on loopback only, and calls are
 * accepted from loopback peers only.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

export const NODE_HEADER = 'svc-cluster-node';
export const TIME_HEADER = 'svc-cluster-time';
export const MAC_HEADER = 'svc-cluster-mac';

/** Clocks of the nodes may differ this much; a captured call is refused once it is older. */
export const MAX_SKEW_MS = 30_000;

export type CallKey = Buffer | undefined;

/** The HMAC key of node-to-node calls, from the decoded cluster secret; undefined without one. */
export function callKeyFrom(secret: Uint8Array | undefined): CallKey {
  if (secret === undefined) return undefined;
  return Buffer.from(hkdfSync('sha256', secret, new Uint8Array(0), 'svc cluster grpc', 32));
}

function mac(key: Buffer, path: string, node: string, time: string, content: string): Buffer {
  return createHmac('sha256', key).update(`${path}\n${node}\n${time}\n`).update(content).digest();
}

/** The metadata entries of a call from `node` to `path` with this content. */
export function signCall(key: CallKey, path: string, node: string, nowMs: number, content: string): Record<string, string> {
  const time = String(nowMs);
  const headers: Record<string, string> = { [NODE_HEADER]: node, [TIME_HEADER]: time };
  if (key !== undefined) headers[MAC_HEADER] = mac(key, path, node, time, content).toString('base64');
  return headers;
}

const LOOPBACK_PEER = /^(ipv4:)?127\.|^(ipv6:)?(\[::1\]|::1)|^(ipv6:)?\[?::ffff:127\./;

/** Undefined when the call is proven; otherwise why it is refused. */
export function verifyCall(
  key: CallKey,
  headers: { get(name: string): string | undefined },
  call: { path: string; peer: string; nowMs: number; content: string },
): string | undefined {
  const node = headers.get(NODE_HEADER);
  const time = headers.get(TIME_HEADER);
  if (node === undefined || node === '' || time === undefined) return 'not a node-to-node call';
  if (key === undefined) return LOOPBACK_PEER.test(call.peer) ? undefined : 'node-to-node calls without cluster.secret are accepted from loopback only';
  const at = Number(time);
  if (!Number.isSafeInteger(at) || Math.abs(call.nowMs - at) > MAX_SKEW_MS) return 'the call is too old or from a clock too far off';
  const given = Buffer.from(headers.get(MAC_HEADER) ?? '', 'base64');
  const expected = mac(key, call.path, node, time, call.content);
  return given.length === expected.length && timingSafeEqual(given, expected) ? undefined : 'the call is not signed with this cluster\'s secret';
}

/** What a stream frame's MAC covers beside the stream's path, node and time: its sequence number and content. */
const frameContent = (seq: number, content: string): string => `${seq}\n${content}`;

/** The MAC of one frame of a stream opened at `time` (its `svc-cluster-time`); empty without a key. */
export function signFrame(key: CallKey, path: string, node: string, time: string, seq: number, content: string): string {
  return key === undefined ? '' : mac(key, path, node, time, frameContent(seq, content)).toString('base64');
}

/** Whether a frame's MAC is right; always without a key (the stream's peer was checked when it opened). */
export function verifyFrame(key: CallKey, path: string, node: string, time: string, seq: number, content: string, given: string): boolean {
  if (key === undefined) return true;
  const presented = Buffer.from(given, 'base64');
  const expected = mac(key, path, node, time, frameContent(seq, content));
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}
