/**
 * `svc agents deploy FILE.wasm --name NAME`: admits a module and starts it as
 * a new agent.
 */
import { parseSize } from '../../config/units.js';
import { defineCommand, UsageError } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { readModuleFile } from '../module-file.js';
import { OUTPUT_FLAG, render } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';

export const agentsDeployCommand = defineCommand({
  path: ['agents', 'deploy'],
  summary: 'Deploy a WebAssembly module as a new agent.',
  description: `The server checks the module against the agent ABI (the same admission as 'svc check'), stores it and
starts the agent; the command returns once the agent has started. In table form it prints only the
new agent's id, so a script can keep it: id=$(svc agents deploy ...).`,
  args: [{ name: 'FILE.wasm', description: 'The module to deploy (Agent ABI v1).' }],
  flags: {
    name: { type: 'string', short: 'n', value: 'NAME', required: true, description: "The agent's name, unique on the server." },
    capability: { type: 'string', short: 'c', value: 'NAME', multiple: true, description: 'A capability the agent advertises (a label).' },
    'memory-limit': { type: 'string', short: 'm', value: 'SIZE', description: 'Linear memory the agent may use: bytes, 64KiB, 16MiB (default: the server maximum).' },
    output: OUTPUT_FLAG,
    ...CONNECTION_FLAGS,
  },
  examples: [
    { description: 'Deploy the echo example and keep its id', command: 'id=$(svc agents deploy examples/build/echo.wasm --name echo)' },
    { description: 'Deploy with capabilities and a 4 MiB memory limit', command: 'svc agents deploy counter.wasm -n counter -c counting -c demo -m 4MiB' },
  ],
  async run({ values, args: [file = ''], io }) {
    const memoryLimit = values['memory-limit'] === undefined ? 0 : parseSize(values['memory-limit']);
    if (memoryLimit === undefined) throw new UsageError(`--memory-limit takes a size (bytes, 64KiB, 16MiB), got '${values['memory-limit']}'`);
    const wasm = readModuleFile(file, io.cwd);
    return withRemote(values, io, async ({ grpc, output }) => {
      const deployed = await grpc().deploy(
        { name: values.name ?? '', wasm_module: wasm, capabilities: values.capability, resources: { memory_limit: memoryLimit } },
        { timeoutMs: CALL_TIMEOUT_MS },
      );
      io.out(render(output, deployed, { table: () => `${deployed.agent_id}\n` }));
      return EXIT.ok;
    });
  },
});
