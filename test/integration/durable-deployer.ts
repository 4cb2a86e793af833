/**
 * Child process of durability.test.ts: `durable-deployer.ts <dataDir> <count>`
 * starts the server on `dataDir` and deploys up to `count` counter agents one
 * after another, writing `ack <agent_id>` to stdout as each deploy returns,
 * the way a client sees its acknowledgement. Then it waits to be killed; the
 * test SIGKILLs it part-way.
 */
import { readFileSync, writeSync } from 'node:fs';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { loadConfig } from '../../src/config/load.js';
import { startServer } from '../../src/server.js';
import { createLogger } from '../../src/telemetry/logger.js';

const [dataDir, countArg] = process.argv.slice(2);
const count = Number(countArg);
if (!dataDir || !Number.isSafeInteger(count) || count <= 0) {
  process.stderr.write('usage: durable-deployer.ts <dataDir> <count>\n');
  process.exit(2);
}

const counter = new Uint8Array(readFileSync((await ensureExamplesBuilt()).get('counter')!));
const config = loadConfig({ argv: [`--storage.data_dir=${dataDir}`, '--runtime.executor_workers=1'], env: {}, cwd: dataDir });
const server = await startServer(config, createLogger({ level: 'fatal', enabled: false }));
const ctx = { principal: 'deployer', trace_id: 'durability' };
for (let i = 0; i < count; i++) {
  const { agent_id } = await server.service.deploy({ name: `counter-${i}`, wasm_module: counter, capabilities: ['count'], resources: { memory_limit: 0, cpu_shares: 0 } }, ctx);
  // Synchronous: the ack leaves only after deploy returned, and nothing is buffered in this process.
  writeSync(1, `ack ${agent_id}\n`);
}
// Deployed everything before the kill: stay up so that the kill still lands on a running server.
setInterval(() => undefined, 60_000);
