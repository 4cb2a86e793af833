// The manager (initiator) of a FIPA contract net (examples/README.md):
//   `request` "<task> <contractor id>..." from a client: `cfp` <task> to each contractor;
//   each `propose` <price> or `refuse` (or a platform `failure` for a contractor that cannot
//   answer) counts as an answer; once all answered, `accept-proposal` to the lowest price and
//   `reject-proposal` to the other bidders; the winner's `inform` goes back to the client as
//   `inform` "<task> awarded to <id> at <price>: <result>"; no proposals is a `failure`.
// One negotiation at a time: a new request starts over.
import { Message, log, onMessage, post, randomU32 } from "svc-agent-sdk";
export { handle } from "svc-agent-sdk";

const PROTOCOL = "fipa-contract-net";

let client = "";
let task = "";
let conversation = "";
let contractors: string[] = [];
let answered: string[] = [];
let bidders: string[] = [];
let winner = "";
let winningPrice: i32 = -1;
let awardId = "";

/** A message in this negotiation's conversation and protocol. */
function sendTo(receiver: string, performative: string, content: string, replyWith: string = ""): void {
  const msg = new Message();
  msg.receiver = receiver;
  msg.messageType = performative;
  msg.content = content;
  msg.conversationId = conversation;
  msg.protocol = PROTOCOL;
  msg.replyWith = replyWith;
  post(msg);
}

/** The price of a proposal: up to six digits; -1 for anything else. */
function priceOf(text: string): i32 {
  if (text.length == 0 || text.length > 6) return -1;
  let value: i32 = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return -1;
    value = value * 10 + (c - 0x30);
  }
  return value;
}

function finish(performative: string, content: string): void {
  sendTo(client, performative, content);
  log("manager: " + performative + " to " + client + ": " + content);
  conversation = "";
}

function start(msg: Message): void {
  const words = msg.content.split(" ").filter((word: string): bool => word.length > 0);
  if (words.length < 2) {
    const refusal = new Message();
    refusal.messageType = "refuse";
    refusal.content = "expected: <task> <contractor id>...";
    post(refusal);
    return;
  }
  client = msg.sender;
  task = words[0];
  contractors = words.slice(1);
  answered = [];
  bidders = [];
  winner = "";
  winningPrice = -1;
  awardId = "";
  conversation = "cnet-" + randomU32().toString(16);
  log("manager: cfp for " + task + " to " + contractors.length.toString() + " contractors in " + conversation);
  for (let i = 0; i < contractors.length; i++) sendTo(contractors[i], "cfp", task);
}

/** Once every contractor answered: award the lowest price, or report that nobody bid. */
function award(): void {
  if (answered.length < contractors.length) return;
  if (bidders.length == 0) {
    finish("failure", "no proposals for " + task);
    return;
  }
  awardId = "award-" + conversation;
  for (let i = 0; i < bidders.length; i++) {
    if (bidders[i] == winner) sendTo(winner, "accept-proposal", task, awardId);
    else sendTo(bidders[i], "reject-proposal", task);
  }
}

onMessage((msg: Message): void => {
  const type = msg.messageType;
  if (type == "request") {
    start(msg);
    return;
  }
  if (conversation.length == 0 || msg.conversationId != conversation) {
    log("manager: ignored " + type + " from " + msg.sender + " outside a negotiation");
    return;
  }
  if (awardId.length == 0) {
    // Collecting answers: a contractor's proposal or refusal, or the platform's failure for one that could not answer.
    const from = msg.sender == "platform" ? msg.inReplyTo : msg.sender;
    if (type == "propose" && contractors.includes(msg.sender) && !answered.includes(msg.sender)) {
      const price = priceOf(msg.content);
      answered.push(msg.sender);
      if (price >= 0) {
        bidders.push(msg.sender);
        if (winningPrice < 0 || price < winningPrice) {
          winningPrice = price;
          winner = msg.sender;
        }
      }
      award();
    } else if ((type == "refuse" && contractors.includes(msg.sender)) || (type == "failure" && msg.sender == "platform")) {
      if (!answered.includes(from)) answered.push(from);
      award();
    } else {
      log("manager: ignored " + type + " from " + msg.sender);
    }
    return;
  }
  if (type == "inform" && msg.sender == winner) {
    finish("inform", task + " awarded to " + winner + " at " + winningPrice.toString() + ": " + msg.content);
  } else if (type == "failure" && (msg.sender == winner || msg.inReplyTo == awardId)) {
    finish("failure", task + " awarded to " + winner + " failed: " + msg.content);
  } else {
    log("manager: ignored " + type + " from " + msg.sender);
  }
});
