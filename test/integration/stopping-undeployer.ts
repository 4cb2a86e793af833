/**
 * Child process of undeploy-crash.test.ts: `stopping-undeployer.ts <dataDir>`
 * starts the server on `dataDir`, deploys an agent that stays busy for
 * seconds and one that does not, writes `deployed <busy> <idle>`, sends the
 * busy one work, undeploys it while it executes, and writes `stopping <busy>`
 * once the agent is stopping (draining its execution, which its long
 * `agent_shutdown_timeout` lets run). Then it waits to be killed.
 */
import { readFileSync, writeSync } from 'node:fs';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { loadConfig } from '../../src/config/load.js';
import { startServer } from '../../src/server.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { burner, compile } from '../agents/agent-wat.js';

const [dataDir] = process.argv.slice(2);
if (!dataDir) {
  process.stderr.write('usage: stopping-undeployer.ts <dataDir>\n');
  process.exit(2);
}

const settings = {
  'storage.data_dir': dataDir,
  'runtime.executor_workers': 1,
  'runtime.fuel_per_execution': 1e15,
  'runtime.max_execution_time': '1h',
  'runtime.execution_timeout': '1h',
  'runtime.agent_shutdown_timeout': '1h',
  // The busy agent's long execution is what the undeploy drains: no slice may cut it.
  'runtime.execution_slice': 0,
};
const config = loadConfig({ argv: Object.entries(settings).map(([k, v]) => `--${k}=${v}`), env: {}, cwd: dataDir });
const server = await startServer(config, createLogger({ level: 'fatal', enabled: false }));
const ctx = { principal: 'undeployer', trace_id: 'undeploy-crash' };
const deploy = async (name: string, module: Uint8Array) =>
  (await server.service.deploy({ name, wasm_module: module, capabilities: [], resources: { memory_limit: 0, cpu_shares: 0 } }, ctx)).agent_id;
const busy = await deploy('busy', await compile(burner(2_000_000_000)));
const idle = await deploy('idle', new Uint8Array(readFileSync((await ensureExamplesBuilt()).get('echo')!)));
writeSync(1, `deployed ${busy} ${idle}\n`);
const bus = server.host()!.bus;
bus.subscribe().subscribe((event) => {
  if (event.kind === 'message' && event.direction === 'delivered' && event.message.receiver === busy) {
    // Executing now: the undeploy has an execution to drain. Its answer is never awaited; the kill comes first.
    void server.service.undeploy(busy, ctx);
  } else if (event.kind === 'lifecycle' && event.agent_id === busy && event.to === 'stopping') {
    writeSync(1, `stopping ${busy}\n`);
  }
});
await server.service.send({ receiver: busy, message_type: 'request', content: 'work' }, ctx);
setInterval(() => undefined, 60_000);
