/**
 * What the layer above (the agent registry) plugs into the membership, in the
 * manner of memberlist's `Delegate`: payloads piggybacked on gossip, a
 * handler for payloads that arrive, and its whole state for push-pull
 * anti-entropy. Every method is optional.
 */

export interface MembershipDelegate {
  /**
   * Payloads to piggyback on a packet: their lengths plus `overhead` each
   * must fit in `limit` bytes. The delegate decides how often each is sent
   * (`createBroadcastQueue` counts retransmissions the way the membership's
   * own gossip does).
   */
  broadcasts?(overhead: number, limit: number): Uint8Array[];
  /** A payload from another node: a piggybacked broadcast or a message sent with `send`/`sendBestEffort`. */
  onMessage?(payload: Uint8Array, from: string): void;
  /** The state sent in a push-pull; `join` is set when the exchange is a join. */
  localState?(join: boolean): Uint8Array;
  /** The other side's `localState`, received in a push-pull. */
  mergeRemoteState?(state: Uint8Array, join: boolean): void;
}
