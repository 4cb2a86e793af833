/**
 * Child process of crash.test.ts: `crash-writer.ts <dataDir> <count>` stores up
 * to `count` agents and, after each `putAgentWithModule` returns, writes
 * `ack <agent_id>` to stdout, the way deploy acknowledges a client. The test
 * kills it with SIGKILL part-way.
 */
import { writeSync } from 'node:fs';
import { createStore } from '../../src/store/store.js';
import { moduleBytes, newAgent } from './store-fixtures.js';

const [dataDir, countArg] = process.argv.slice(2);
const count = Number(countArg);
if (!dataDir || !Number.isSafeInteger(count) || count <= 0) {
  process.stderr.write('usage: crash-writer.ts <dataDir> <count>\n');
  process.exit(2);
}

const store = createStore({ dataDir });
const shared = moduleBytes(0, 12 * 1024);
for (let i = 0; i < count; i++) {
  // Every third agent shares a module, so both insert paths are under the knife.
  const bytes = i % 3 === 0 ? shared : moduleBytes(i + 1, 12 * 1024);
  const agent = store.putAgentWithModule(newAgent(i), bytes);
  // Synchronous write: the ack leaves only after the commit, and nothing is buffered in this process.
  writeSync(1, `ack ${agent.agentId}\n`);
}
store.close();
