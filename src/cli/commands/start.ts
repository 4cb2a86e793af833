/**
 * `svc start`: runs the server until SIGTERM or SIGINT, then drains. The
 * listeners bind before the services start, so probes read /ready 503
 * (starting) while stored agents are restored; `listening` is logged once
 * everything is up.
 */
import { getHeapStatistics } from 'node:v8';
import { ignoredEnvNames } from '../../config/load.js';
import type { Listeners } from '../../listeners.js';
import type { Server } from '../../server.js';
import { defineCommand } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { heapLimitExecArgv, runUnderHeapLimit } from '../heap-limit.js';
import { SERVER_CONFIG_FLAG, serverConfig } from './server-flags.js';

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
    // Run by `svc start` under a heap limit (heap-limit.ts): that process is gone, so stop as it would have asked.
    // The channel must not keep this process alive once the server stopped.
    if (process.connected) {
      process.once('disconnect', () => stop('SIGTERM'));
      process.channel?.unref();
    }
  });
}

export const startCommand = defineCommand({
  path: ['start'],
  summary: 'Run the server until SIGTERM or SIGINT.',
  description: `Listens on server.http_addr (REST, WebSocket, /health, /ready), server.grpc_addr (gRPC) and
server.metrics_addr (Prometheus /metrics), and logs one JSON line per event on stdout; the
'listening' line names every bound address. On the first SIGTERM or SIGINT it drains (in-flight
executions finish, /ready answers 503) and exits 0; a second signal exits at once.
It exits 1 at once when another server holds its data directory, or when the store it finds
holds less than the data directory recorded or fails its integrity check; --recover accepts
such a store as found (or rebuilds one whose indexes are damaged), once, by hand.
With runtime.heap_limit set, it runs the server as a child process under that V8 heap limit.`,
  args: [],
  flags: {
    config: SERVER_CONFIG_FLAG,
    recover: { type: 'boolean', description: 'Accept a store that holds less than its data directory recorded, and rebuild one with damaged indexes.' },
  },
  settings: true,
  examples: [
    { description: 'Run with the defaults (data under ./data)', command: 'svc start' },
    { description: 'Ephemeral ports and a larger agent limit', command: 'SVC_HTTP_ADDR=127.0.0.1:0 SVC_GRPC_ADDR=127.0.0.1:0 svc start --runtime.max_agents=50000' },
    { description: 'With a configuration file', command: 'svc start --config /etc/svc/svc.toml' },
    { description: 'Once, after a refused start, to accept the store as found', command: 'svc start --recover' },
  ],
  async run({ values, settings, io }) {
    const config = serverConfig(io, values.config, settings);
    const execArgv = heapLimitExecArgv(process.execArgv, config.runtime.heap_limit);
    if (execArgv !== undefined) return runUnderHeapLimit(execArgv);
    // Loaded here, not with the command table: the client commands and --help never need the server.
    const [{ startServer }, { startListeners }, { createLogger, loggerOptionsFrom }] = await Promise.all([
      import('../../server.js'),
      import('../../listeners.js'),
      import('../../telemetry/logger.js'),
    ]);
    const log = createLogger(loggerOptionsFrom(config.observability));
    const ignored = ignoredEnvNames(io.env);
    if (ignored.length > 0) log.warn({ variables: ignored }, 'SVC_ environment variables that name no configuration section were ignored');
    const stopped = stopSignal((signal) => {
      log.warn({ signal }, 'second signal: exiting without draining');
      process.exit(EXIT.failure);
    });
    let bound: Listeners | undefined;
    let server: Server;
    try {
      server = await startServer(config, log, {
        recover: values.recover === true,
        listenerAddresses: () => bound?.addresses,
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
    log.info({ ...listeners.addresses, heap_limit: getHeapStatistics().heap_size_limit }, 'listening');
    // Either an operator's signal, or the root supervisor giving up on a service.
    const reason = await Promise.race([stopped.then((signal) => ({ signal })), server.exited.then((exit) => ({ exit }))]);
    log.info(reason, 'shutting down');
    // The HTTP listener outlives the agents' drain, so /ready answers 503 (draining) meanwhile
    // instead of the port going dark; API calls then get UNAVAILABLE (draining).
    await listeners.drain();
    await server.stop();
    await listeners.stop();
    return 'exit' in reason && reason.exit.kind === 'abnormal' ? EXIT.failure : EXIT.ok;
  },
});
