// Passes a message back and forth for ever with another relay (the throughput benchmark's agent):
// `relay:<agentId>` sends `inform` "relay" to that agent; every other message is answered with
// `inform` and the content it carried, so two relays started on each other never stop.
import { Message, onMessage, post, reply } from "svc-agent-sdk";
export { handle } from "svc-agent-sdk";

const START_PREFIX = "relay:";

onMessage((msg: Message): void => {
  if (msg.content.startsWith(START_PREFIX)) {
    const first = new Message();
    first.receiver = msg.content.substring(START_PREFIX.length);
    first.messageType = "inform";
    first.content = "relay";
    post(first);
  } else {
    reply("inform", msg.content);
  }
});
