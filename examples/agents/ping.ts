// Plays ping-pong with a pong agent (protocol in examples/README.md):
//   "start:<pongAgentId>" or "start:<pongAgentId>:<rounds>" sends `request` "ping" to it;
//   each `inform` "pong" from that agent sends the next ping until `rounds` pongs came back.
import { Message, log, now, onMessage, post, randomU32 } from "svc-agent-sdk";
export { handle } from "svc-agent-sdk";

const START_PREFIX = "start:";
const DEFAULT_ROUNDS: u32 = 3;
// Keeps a demo from flooding the bus by accident.
const MAX_ROUNDS: i64 = 10000;
const NS_PER_MS: u64 = 1_000_000;

// The game in progress; `partner` is empty when there is none.
let partner = "";
let conversation = "";
let rounds: u32 = 0;
let pongs: u32 = 0;
let startedNs: u64 = 0;

/** The number after the last ':' of `rest`, or -1 if what follows that colon is not all digits. */
function trailingNumber(rest: string): i64 {
  const colon = rest.lastIndexOf(":");
  if (colon < 0 || colon == rest.length - 1) return -1;
  let value: i64 = 0;
  for (let i = colon + 1; i < rest.length; i++) {
    const c = <i64>rest.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return -1;
    // Saturate: only "more than MAX_ROUNDS" matters.
    if (value <= MAX_ROUNDS) value = value * 10 + (c - 0x30);
  }
  return value;
}

function sendPing(): void {
  const msg = new Message();
  msg.receiver = partner;
  msg.messageType = "request";
  msg.content = "ping";
  msg.conversationId = conversation;
  post(msg);
}

function start(rest: string): void {
  const count = trailingNumber(rest);
  partner = count < 0 ? rest : rest.substring(0, rest.lastIndexOf(":"));
  if (partner.length == 0) {
    log("ping: start needs a pong agent id");
    return;
  }
  rounds = count < 0 ? DEFAULT_ROUNDS : <u32>max<i64>(1, min<i64>(count, MAX_ROUNDS));
  pongs = 0;
  conversation = "ping-" + randomU32().toString(16);
  startedNs = now();
  log("ping: " + rounds.toString() + " rounds with " + partner + " in " + conversation);
  sendPing();
}

function onPong(): void {
  pongs++;
  if (pongs < rounds) {
    sendPing();
    return;
  }
  const elapsedMs = (now() - startedNs) / NS_PER_MS;
  log("ping: done, " + pongs.toString() + " pongs from " + partner + " in " + elapsedMs.toString() + " ms");
  partner = "";
}

onMessage((msg: Message): void => {
  if (msg.content.startsWith(START_PREFIX)) {
    start(msg.content.substring(START_PREFIX.length));
  } else if (partner.length > 0 && msg.sender == partner && msg.messageType == "inform" && msg.content == "pong") {
    onPong();
  } else {
    log("ping: ignored " + msg.messageType + " from " + msg.sender);
  }
});
