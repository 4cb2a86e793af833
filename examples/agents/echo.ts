// Replies `inform` with the content it received.
import { Message, onMessage, reply } from "svc-agent-sdk";
export { handle } from "svc-agent-sdk";

onMessage((msg: Message): void => {
  reply("inform", msg.content);
});
