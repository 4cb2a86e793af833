// Counts the messages it has handled and replies `inform` with the count ("1", "2", ...).
// The count lives in a global, so it survives between messages (and hibernation).
import { Message, onMessage, reply } from "svc-agent-sdk";
export { handle } from "svc-agent-sdk";

let count: u64 = 0;

onMessage((_msg: Message): void => {
  count++;
  reply("inform", count.toString());
});
