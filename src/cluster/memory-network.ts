/**
 * An in-memory network for simulations: transports attached to one shared
 * (simulated) clock, with per-link loss and delay, one-way cuts, and a seeded
 * random source, so every failure replays from its seed.
 *
 * Packets are lost on a link with its loss probability. A request (a TCP
 * exchange) needs both directions open: a cut either way, or the loss of the
 * opening packet or of its answer (SYN, SYN-ACK), fails it at its timeout;
 * once open it is reliable, as TCP is. A request to an address nobody is
 * attached to is refused after one round trip.
 */
import type { Clock } from '../../supervisors/clock.js';
import type { Random } from '../../supervisors/random.js';
import type { StallableClock } from './stallable-clock.js';
import { MAX_PACKET_BYTES, type Transport, type TransportHandlers } from './transport.js';

export interface LinkConditions {
  /** Probability that a packet is lost, in [0, 1]. */
  readonly loss?: number;
  /** One-way delay. */
  readonly delayMs?: number;
  /** Extra delay drawn uniformly from [0, jitterMs). */
  readonly jitterMs?: number;
}

export interface LinkStats {
  packetsSent: number;
  packetsDelivered: number;
  packetsDropped: number;
  requests: number;
}

export interface MemoryNetwork {
  /** A transport at `address`; its arrivals run through `clock` when one is given (a node that can stall). */
  attach(address: string, options?: { readonly clock?: StallableClock }): Transport;
  /** Conditions of every link that has none of its own. */
  setDefaults(conditions: LinkConditions): void;
  setLink(from: string, to: string, conditions: LinkConditions): void;
  /** Nothing from `from` reaches `to`; the other direction is untouched. */
  cut(from: string, to: string): void;
  /** Cuts every link between the two groups, both ways. */
  partition(a: readonly string[], b: readonly string[]): void;
  /** Removes every cut; loss and delay stay. */
  heal(): void;
  stats(address: string): LinkStats;
  totals(): LinkStats;
}

export interface MemoryNetworkOptions {
  readonly clock: Clock;
  readonly random: Random;
  readonly defaults?: LinkConditions;
}

interface Endpoint {
  readonly clock: StallableClock | undefined;
  handlers: TransportHandlers | undefined;
  readonly stats: LinkStats;
}

const DEFAULT_CONDITIONS: Required<LinkConditions> = { loss: 0, delayMs: 1, jitterMs: 0 };

export function createMemoryNetwork(options: MemoryNetworkOptions): MemoryNetwork {
  const { clock, random } = options;
  let defaults: Required<LinkConditions> = { ...DEFAULT_CONDITIONS, ...options.defaults };
  const links = new Map<string, LinkConditions>();
  const cuts = new Set<string>();
  const endpoints = new Map<string, Endpoint>();
  const emptyStats = (): LinkStats => ({ packetsSent: 0, packetsDelivered: 0, packetsDropped: 0, requests: 0 });
  const statsOf = new Map<string, LinkStats>();

  const key = (from: string, to: string) => `${from}>${to}`;
  const lost = (from: string, to: string) => {
    const link = key(from, to);
    return cuts.has(link) || random.next() < (links.get(link)?.loss ?? defaults.loss);
  };
  const delay = (from: string, to: string) => {
    const link = links.get(key(from, to));
    const jitter = link?.jitterMs ?? defaults.jitterMs;
    return (link?.delayMs ?? defaults.delayMs) + (jitter > 0 ? random.next() * jitter : 0);
  };
  const arrive = (endpoint: Endpoint, callback: () => void) => (endpoint.clock ? endpoint.clock.deliver(callback) : callback());

  function attach(address: string, attachOptions: { readonly clock?: StallableClock } = {}): Transport {
    if (endpoints.has(address)) throw new Error(`memory network: ${address} is already attached`);
    const stats = statsOf.get(address) ?? emptyStats();
    statsOf.set(address, stats);
    const self: Endpoint = { clock: attachOptions.clock, handlers: undefined, stats };
    endpoints.set(address, self);
    // The sender's side of an exchange runs on its own clock too, so a stalled node reads answers late.
    const ownClock: Clock = attachOptions.clock ?? clock;
    let closed = false;

    return {
      address,
      maxPacketBytes: MAX_PACKET_BYTES,
      listen(handlers) {
        self.handlers = handlers;
      },
      sendPacket(to, bytes) {
        if (closed) return;
        stats.packetsSent += 1;
        if (lost(address, to)) {
          stats.packetsDropped += 1;
          return;
        }
        const copy = Uint8Array.from(bytes);
        clock.setTimeout(() => {
          const target = endpoints.get(to);
          if (!target?.handlers) {
            stats.packetsDropped += 1;
            return;
          }
          stats.packetsDelivered += 1;
          arrive(target, () => target.handlers?.packet(copy, address));
        }, delay(address, to));
      },
      request(to, bytes, timeoutMs) {
        stats.requests += 1;
        return new Promise<Uint8Array>((resolve, reject) => {
          let settled = false;
          const settle = (outcome: () => void) => {
            if (settled) return;
            settled = true;
            ownClock.clearTimeout(timer);
            outcome();
          };
          const timer = ownClock.setTimeout(() => settle(() => reject(new Error(`request to ${to} timed out after ${timeoutMs} ms`))), timeoutMs);
          if (closed) return settle(() => reject(new Error('transport closed')));
          // The handshake: lost either way, the exchange just times out.
          if (lost(address, to) || lost(to, address)) return;
          const there = delay(address, to);
          const back = delay(to, address);
          const copy = Uint8Array.from(bytes);
          clock.setTimeout(() => {
            const target = endpoints.get(to);
            if (!target?.handlers) {
              clock.setTimeout(() => settle(() => reject(new Error(`connection to ${to} refused`))), back);
              return;
            }
            arrive(target, () => {
              target.handlers?.request(copy, address).then(
                (answer) => {
                  const reply = Uint8Array.from(answer);
                  clock.setTimeout(() => arrive(self, () => settle(() => resolve(reply))), back);
                },
                (err: unknown) => clock.setTimeout(() => settle(() => reject(err instanceof Error ? err : new Error(String(err)))), back),
              );
            });
          }, there);
        });
      },
      async close() {
        closed = true;
        if (endpoints.get(address) === self) endpoints.delete(address);
      },
    };
  }

  return {
    attach,
    setDefaults(next) {
      defaults = { ...DEFAULT_CONDITIONS, ...next };
    },
    setLink(from, to, next) {
      links.set(key(from, to), next);
    },
    cut(from, to) {
      cuts.add(key(from, to));
    },
    partition(a, b) {
      for (const x of a) {
        for (const y of b) {
          cuts.add(key(x, y));
          cuts.add(key(y, x));
        }
      }
    },
    heal() {
      cuts.clear();
    },
    stats: (address) => ({ ...(statsOf.get(address) ?? emptyStats()) }),
    totals() {
      const total = emptyStats();
      for (const s of statsOf.values()) {
        total.packetsSent += s.packetsSent;
        total.packetsDelivered += s.packetsDelivered;
        total.packetsDropped += s.packetsDropped;
        total.requests += s.requests;
      }
      return total;
    },
  };
}
