#!/usr/bin/env -S node --max-semi-space-size=64
import { ConfigError, SETTING_FLAG, ignoredEnvNames, loadConfig } from '../config/load.js';
import { isSvcError } from '../errors/svc-error.js';
import { createAdmission } from '../sandbox/admission.js';
import { sandboxLimitsFrom } from '../sandbox/limits.js';
import { startServer, type Server } from '../server.js';
import { startListeners, type Listeners } from '../listeners.js';
import { createLogger, loggerOptionsFrom } from '../telemetry/logger.js';
import { VERSION } from '../version.js';
import { AGENTS_USAGE, agentsCommand } from './agents-command.js';
import { EXIT } from './exit-codes.js';
import { HEALTH_USAGE, healthCommand } from './health-command.js';
import { MESSAGES_USAGE, messagesCommand } from './messages-command.js';
import { readModuleFile } from './module-file.js';
import { errorLine } from './output.js';
import { UsageError } from './remote.js';

export { EXIT };

const USAGE = `usage: svc <command> [options]

server:
  start                run the server until SIGTERM or SIGINT
  check FILE.wasm      run a module through admission and print what it found
  config               print the resolved configuration as JSON
  version              print the version
  (these take --config FILE and --section.key=value)

client (gRPC to --server HOST:PORT, default the configured server.grpc_addr; --output table|json):
  agents deploy FILE.wasm --name NAME [--capability C]... [--memory-limit SIZE]
  agents list | agents get AGENT_ID | agents undeploy AGENT_ID
  messages send AGENT_ID --type PERFORMATIVE [--content TEXT]
  messages tail [--agent AGENT_ID] [--type PERFORMATIVE]... [--count N]
  health

exit codes: 0 ok, 1 failure, 2 usage, 3 config, 4 rejected, 5 not found,
            6 unavailable or timed out, 7 denied, 8 limited
`;

/** The usage of the command that failed to parse, so the hint is short. */
const COMMAND_USAGE: Readonly<Record<string, string>> = { agents: AGENTS_USAGE, messages: MESSAGES_USAGE, health: HEALTH_USAGE };

/** Resolves on the first SIGTERM/SIGINT; a second one exits at once. Installed before start-up so an early signal still drains. */
function stopSignal(onSecond: (signal: NodeJS.Signals) => void): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let signalled = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (signalled) onSecond(signal);
      signalled = true;
      resolve(signal);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}

/**
 * The positional arguments of a server command (`start`, `check`, `config`),
 * past its `--config FILE` and `--section.key[=]value` flags. Any other
 * option, or a positional too many, is a usage error: passing over it would
 * start a server without the setting its operator meant to give.
 */
function serverArgs(argv: readonly string[], maxPositionals: number): string[] {
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const setting = SETTING_FLAG.exec(arg);
    if (arg === '--config' || (setting !== null && setting[3] === undefined)) i++;
    else if (setting === null && !arg.startsWith('--config=')) {
      if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown option '${arg}'`);
      positionals.push(arg);
    }
  }
  if (positionals.length > maxPositionals) throw new UsageError(`unexpected argument '${positionals[maxPositionals] ?? ''}'`);
  return positionals;
}

async function start(argv: readonly string[]): Promise<number> {
  serverArgs(argv, 0);
  const config = loadConfig({ argv, env: process.env });
  const log = createLogger(loggerOptionsFrom(config.observability));
  const ignored = ignoredEnvNames(process.env);
  if (ignored.length > 0) log.warn({ variables: ignored }, 'SVC_ environment variables that name no configuration section were ignored');
  const stopped = stopSignal((signal) => {
    log.warn({ signal }, 'second signal: exiting without draining');
    process.exit(EXIT.failure);
  });
  // The listeners bind before the services start, so probes read /ready 503 (starting) while stored
  // agents are restored; `listening` is logged once everything is up, as before.
  let bound: Listeners | undefined;
  let server: Server;
  try {
    server = await startServer(config, log, {
      whileStarting: async (starting) => {
        bound = await startListeners(starting, config, log);
      },
    });
  } catch (err) {
    await bound?.stop();
    throw err;
  }
  const listeners = bound;
  if (listeners === undefined) throw new Error('the listeners did not start');
  log.info({ ...listeners.addresses }, 'listening');
  // Either an operator's signal, or the root supervisor giving up on a service.
  const reason = await Promise.race([stopped.then((signal) => ({ signal })), server.exited.then((exit) => ({ exit }))]);
  log.info(reason, 'shutting down');
  // The HTTP listener outlives the agents' drain, so /ready answers 503 (draining) meanwhile
  // instead of the port going dark; API calls then get UNAVAILABLE (draining).
  await listeners.drain();
  await server.stop();
  await listeners.stop();
  return 'exit' in reason && reason.exit.kind === 'abnormal' ? EXIT.failure : EXIT.ok;
}

async function check(argv: readonly string[]): Promise<number> {
  const [file] = serverArgs(argv, 1);
  if (file === undefined) {
    process.stderr.write(USAGE);
    return EXIT.usage;
  }
  const config = loadConfig({ argv, env: process.env });
  const admitted = await createAdmission(sandboxLimitsFrom(config.runtime)).admit(readModuleFile(file));
  process.stdout.write(`${JSON.stringify({ sha256: admitted.sha256, size: admitted.size, ...admitted.info }, null, 2)}\n`);
  return EXIT.ok;
}

export async function main(args: readonly string[]): Promise<number> {
  const [command, ...rest] = args;
  try {
    switch (command) {
      case 'start':
        return await start(rest);
      case 'check':
        return await check(rest);
      case 'config':
        serverArgs(rest, 0);
        process.stdout.write(`${JSON.stringify(loadConfig({ argv: rest, env: process.env }), null, 2)}\n`);
        return EXIT.ok;
      case 'agents':
        return await agentsCommand(rest);
      case 'messages':
        return await messagesCommand(rest);
      case 'health':
        return await healthCommand(rest);
      case 'version':
      case '--version':
        process.stdout.write(`${VERSION}\n`);
        return EXIT.ok;
      case undefined:
      case 'help':
      case '--help':
        process.stdout.write(USAGE);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        process.stderr.write(`svc: unknown command '${command}'\n${USAGE}`);
        return EXIT.usage;
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`svc: ${err.message}\n${COMMAND_USAGE[command ?? ''] ?? USAGE}`);
      return EXIT.usage;
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`svc: invalid configuration: ${err.message}\n`);
      return EXIT.config;
    }
    if (isSvcError(err)) {
      process.stderr.write(errorLine(err));
      return EXIT.rejected;
    }
    process.stderr.write(`svc: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.failure;
  }
}

process.exitCode = await main(process.argv.slice(2));
