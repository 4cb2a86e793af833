/**
 * `svc agents update AGENT --module FILE [--keep-state] [--rollback-window N|DURATION]`:
 * replaces a running agent's module (UpdateAgent), or its capabilities and
 * memory limit.
 */
import { parseRollbackWindow } from '../../config/rollback-window.js';
import { parseSize } from '../../config/units.js';
import { defineCommand, UsageError } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { readModuleFile } from '../module-file.js';
import { agentDetails, OUTPUT_FLAG, render } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';

export const agentsUpdateCommand = defineCommand({
  path: ['agents', 'update'],
  summary: "Replace an agent's module (a hot update), capabilities or memory limit.",
  description: `A running agent moves to the new module between two messages: the one it is handling finishes on the
old module, the next ones run on the new one. With --keep-state its memory and mutable globals move
along when the new module declares the same mutable globals in order and enough memory; otherwise the
update is refused (FAILED_PRECONDITION) and the agent keeps running as it was. If the new module
crashes within the rollback window, the previous module comes back with its state. A failed agent
restarts on the new module. Prints the agent with its new module version.`,
  args: [{ name: 'AGENT', description: "The agent's id or name." }],
  flags: {
    module: { type: 'string', short: 'f', value: 'FILE', description: 'The new module (Agent ABI v1).' },
    'keep-state': { type: 'boolean', short: 'k', description: "Carry the agent's linear memory and mutable globals to the new module; then _upgrade runs if exported." },
    'rollback-window': {
      type: 'string',
      short: 'w',
      value: 'N|DURATION',
      description: 'Probation of the new module: a number of messages (10) or a duration (30s); 0 turns rollback off (default: runtime.update_rollback_window).',
    },
    capability: { type: 'string', short: 'c', value: 'NAME', multiple: true, description: 'A capability replacing the current ones (repeat for several).' },
    'memory-limit': { type: 'string', short: 'm', value: 'SIZE', description: 'A new memory limit: bytes, 64KiB, 16MiB.' },
    output: OUTPUT_FLAG,
    ...CONNECTION_FLAGS,
  },
  examples: [
    { description: 'Update a counter keeping its count', command: 'svc agents update counter --module counter-v2.wasm --keep-state' },
    { description: 'Roll back if the new module crashes within 20 messages', command: 'svc agents update "$id" -f v2.wasm -k -w 20' },
    { description: 'Fix a failed agent with a new module', command: 'svc agents update "$id" --module fixed.wasm' },
  ],
  async run({ values, args: [agentId = ''], io }) {
    const memoryLimit = values['memory-limit'] === undefined ? 0 : parseSize(values['memory-limit']);
    if (memoryLimit === undefined) throw new UsageError(`--memory-limit takes a size (bytes, 64KiB, 16MiB), got '${values['memory-limit']}'`);
    const window = values['rollback-window'];
    if (window !== undefined && parseRollbackWindow(window) === undefined) {
      throw new UsageError(`--rollback-window takes a number of messages (10) or a duration with its unit (30s, 5m), got '${window}'`);
    }
    if (values.module === undefined && values.capability === undefined && memoryLimit === 0) {
      throw new UsageError('nothing to update: give --module, --capability or --memory-limit');
    }
    if (values['keep-state'] === true && values.module === undefined) throw new UsageError('--keep-state needs --module');
    const wasm = values.module === undefined ? undefined : readModuleFile(values.module, io.cwd);
    return withRemote(values, io, async ({ grpc, output }) => {
      const agent = await grpc().update(
        {
          agent_id: agentId,
          ...(wasm === undefined ? {} : { wasm_module: wasm }),
          ...(values.capability === undefined ? {} : { capabilities: values.capability }),
          ...(memoryLimit === 0 ? {} : { resources: { memory_limit: memoryLimit } }),
          keep_state: values['keep-state'] === true,
          ...(window === undefined ? {} : { rollback_window: window }),
        },
        { timeoutMs: CALL_TIMEOUT_MS },
      );
      io.out(render(output, agent, { table: () => agentDetails(agent) }));
      return EXIT.ok;
    });
  },
});
