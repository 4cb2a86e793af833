// Version 2 of counter.ts, for a hot update that keeps the count (svc agents update ID --module
// counter-v2.wasm --keep-state): it counts in steps of two. Its mutable globals are counter's, in the
// same order, so counter's state moves over as it is.
import { Message, onMessage, reply } from "svc-agent-sdk";
export { handle } from "svc-agent-sdk";

let count: u64 = 0;

function counted(_msg: Message): void {
  count += 2;
  reply("inform", count.toString());
}

onMessage(counted);

// Top-level code ran only in the first version's life: after an update keeping state, this
// version's handler must be registered here.
export function _upgrade(): void {
  onMessage(counted);
}
