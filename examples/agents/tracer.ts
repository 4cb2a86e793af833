// Replies `inform` listing the metadata of the message it handles, one `key=value` line
// each, in the order they came: the trace context (`traceparent`, `tracestate`) the
// server handed it, and whatever else the sender put there. Empty when there is none.
import { Message, onMessage, reply } from "svc-agent-sdk";
export { handle } from "svc-agent-sdk";

onMessage((msg: Message): void => {
  let listing = "";
  if (msg.hasMetadata) {
    const metadata = msg.metadata;
    const keys = metadata.keys();
    for (let i = 0; i < keys.length; i++) {
      if (i > 0) listing += "\n";
      listing += keys[i] + "=" + metadata.get(keys[i]);
    }
  }
  reply("inform", listing);
});
