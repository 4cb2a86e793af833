// A participant of the FIPA contract net (examples/README.md):
//   `inform` "price:<n>" sets its bid (0 to 999999); `inform` "busy" makes it refuse;
//   `cfp` <task>: `propose` its price (a random one from 10 to 99 until told), or `refuse` "busy";
//   `accept-proposal` <task>: does the work and answers `inform` "done: <task>";
//   `reject-proposal`: logged. Answers go back to the manager in its conversation and protocol.
import { Message, log, onMessage, post, randomU32 } from "svc-agent-sdk";
export { handle } from "svc-agent-sdk";

const PRICE_PREFIX = "price:";
const MAX_PRICE_DIGITS = 6;

let price: i32 = -1;
let busy = false;

function answer(to: Message, performative: string, content: string): void {
  const msg = new Message();
  msg.messageType = performative;
  msg.content = content;
  msg.protocol = to.protocol;
  post(msg);
}

/** Digits only, at most six; -1 for anything else. */
function parsePrice(text: string): i32 {
  if (text.length == 0 || text.length > MAX_PRICE_DIGITS) return -1;
  let value: i32 = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return -1;
    value = value * 10 + (c - 0x30);
  }
  return value;
}

onMessage((msg: Message): void => {
  const type = msg.messageType;
  if (type == "inform" && msg.content.startsWith(PRICE_PREFIX)) {
    const asked = parsePrice(msg.content.substring(PRICE_PREFIX.length));
    if (asked < 0) {
      log("contractor: not a price: " + msg.content);
      return;
    }
    price = asked;
    busy = false;
  } else if (type == "inform" && msg.content == "busy") {
    busy = true;
  } else if (type == "cfp") {
    if (busy) {
      answer(msg, "refuse", "busy");
    } else {
      if (price < 0) price = 10 + <i32>(randomU32() % 90);
      answer(msg, "propose", price.toString());
    }
  } else if (type == "accept-proposal") {
    answer(msg, "inform", "done: " + msg.content);
  } else if (type == "reject-proposal") {
    log("contractor: lost " + msg.content + " to a lower bid");
  } else {
    log("contractor: ignored " + type + " from " + msg.sender);
  }
});
