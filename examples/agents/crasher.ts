// Fails on demand, to watch the platform's failure handling (examples/README.md):
//   "crash"  traps (unreachable);
//   "abort"  calls abort, which logs "abort: <message>" on fd 2 and traps;
//   "throw"  throws, which asc turns into an abort with the source location;
//   "loop"   spins until fuel or the execution timeout stops it;
//   anything else replies `inform` "ok".
import { Message, onMessage, reply } from "svc-agent-sdk";
export { handle } from "svc-agent-sdk";

// Written on every turn so that the loop has an effect and stays in the optimized module.
let spins: u64 = 0;

onMessage((msg: Message): void => {
  const command = msg.content;
  if (command == "crash") {
    unreachable();
  } else if (command == "abort") {
    abort("abort requested by message " + msg.messageId);
  } else if (command == "throw") {
    throw new Error("throw requested by message " + msg.messageId);
  } else if (command == "loop") {
    while (true) spins++;
  } else {
    reply("inform", "ok");
  }
});
