// Replies `inform` "pong" to every `request` "ping"; anything else is logged and
// ignored (answering it could start an endless exchange of not-understood).
import { Message, log, onMessage, reply } from "svc-agent-sdk";
export { handle } from "svc-agent-sdk";

onMessage((msg: Message): void => {
  if (msg.messageType == "request" && msg.content == "ping") {
    reply("inform", "pong");
  } else {
    log("pong: ignored " + msg.messageType + " from " + msg.sender);
  }
});
