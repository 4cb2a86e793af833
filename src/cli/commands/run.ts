/**
 * `svc run FILE.wasm --message JSON`: runs one message through an agent in
 * the server's own sandbox (admission, instrumentation, an executor worker,
 * the configured limits), without a server, and prints what the agent
 * wrote: each outgoing message as one JSON line on stdout, its log lines on
 * stderr. For an author's tests: what an agent answers here, it answers
 * deployed.
 */
import { validateMessage } from '../../bus/message.js';
import { createIdGenerator } from '../../bus/message-id.js';
import { defineCommand, UsageError } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { readModuleFile } from '../module-file.js';
import { SERVER_CONFIG_FLAG, serverConfig } from './server-flags.js';

/** The sender of the message, as a deployed agent would see a client's. */
const LOCAL_SENDER = 'client:local';
/** The agent's id in this run: there is no server to assign one. */
const LOCAL_AGENT = 'local';

function parseMessage(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`--message takes a JSON object, e.g. '{"message_type":"request","content":"hi"}', got '${text}'`);
  }
}

export const runCommand = defineCommand({
  path: ['run'],
  summary: 'Run one message through an agent locally, without a server, and print its output.',
  description: `The module goes through the server's admission and runs in an executor worker under the configured
limits (fuel, execution timeout, output caps), as deployed. The message is the Message JSON a client sends
(message_type required; the sender is client:local, the agent's id "local"). Each message the agent writes is
printed as one JSON line on stdout, each log line on stderr. Exit 0 when the execution succeeded, 1 when it
failed (trap, fuel, timeout, output over its caps), 4 when the module or the message is refused.`,
  args: [{ name: 'FILE.wasm', description: 'The agent module.' }],
  flags: {
    message: { type: 'string', short: 'm', value: 'JSON', description: 'The message to handle (default {"message_type":"request"}).' },
    config: SERVER_CONFIG_FLAG,
  },
  settings: true,
  examples: [
    { description: 'Ask an agent something', command: `svc run build/echo.wasm --message '{"message_type":"request","content":"hi"}'` },
    { description: 'Read the reply content in a test', command: `svc run build/agent.wasm -m '{"message_type":"request","content":"ping"}' | jq -r .content` },
  ],
  async run({ values, args: [file = ''], settings, io }) {
    const config = serverConfig(io, values.config, settings);
    const input = parseMessage(values.message ?? '{"message_type":"request"}');
    const newId = createIdGenerator();
    const message = validateMessage(input, { sender: LOCAL_SENDER, receiver: LOCAL_AGENT, newId });
    const bytes = readModuleFile(file, io.cwd);
    // Loaded here, not with the command table: only this command and check need the sandbox.
    const [{ createAdmission }, { poolOptionsFrom, sandboxLimitsFrom }, { createExecutorPool }, { encodeIncoming, parseOutput }, { maxAgentMemoryBytes }] = await Promise.all([
      import('../../sandbox/admission.js'),
      import('../../sandbox/limits.js'),
      import('../../sandbox/executor-pool.js'),
      import('../../sandbox/abi.js'),
      import('../../agents/agent-settings.js'),
    ]);
    const { runtime } = config;
    const admitted = await createAdmission(sandboxLimitsFrom(runtime)).admit(bytes);
    const pool = createExecutorPool({
      workers: 1,
      spareWorkers: 0,
      ...poolOptionsFrom(runtime),
      // One agent and no neighbours to protect: it gets its whole fuel, as on the isolated lane.
      isolatedWorkers: 0,
      clock: io.clock,
    });
    try {
      const placement = await pool.instantiate(admitted, { label: LOCAL_AGENT, memoryLimitBytes: maxAgentMemoryBytes(runtime) });
      for (const line of placement.log) io.err(`${line}\n`);
      const result = await new Promise<Parameters<Parameters<typeof pool.execute>[2]>[0]>((resolve) => pool.execute(placement.instance, encodeIncoming(message), resolve));
      for (const line of result.stderr) io.err(`${line}\n`);
      if (!result.ok) {
        io.err(`svc: the execution failed: ${result.failure}: ${result.message}\n`);
        return EXIT.failure;
      }
      const { messages, errors } = parseOutput(result.stdout, message, LOCAL_AGENT);
      for (const error of errors) io.err(`svc: an output line is not a message: ${JSON.stringify(error)}\n`);
      for (const outgoing of messages) io.out(`${JSON.stringify({ message_id: newId(), ...outgoing })}\n`);
      return EXIT.ok;
    } finally {
      await pool.close();
    }
  },
});
