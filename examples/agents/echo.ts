// Replies `inform` with the content it received.
import { Message, onMessage, reply } from "../sdk";
export { handle } from "../sdk";

onMessage((msg: Message): void => {
  reply("inform", msg.content);
});
