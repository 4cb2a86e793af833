/**
 * The metrics listener (server.metrics_addr): a plain HTTP server apart from
 * the API, so scraping works while the API is saturated or behind auth, and
 * the API port exposes no internals. `GET /metrics` answers the registry in
 * Prometheus text; the registry comes from the composition root, which
 * registers the svc_* metrics on it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { Logger } from '../../telemetry/logger.js';
import { registerNodeMetrics } from '../../telemetry/node-metrics.js';
import { listenOn, splitAddress } from '../host-port.js';

export const METRICS_PATH = '/metrics';
/** Scrapes are short; a scraper that stalls longer is cut. */
const SCRAPE_TIMEOUT_MS = 10_000;
/** Prometheus servers scrape with a few connections; more is a misuse of this port. */
const DEFAULT_MAX_CONNECTIONS = 64;

export interface MetricsServerOptions {
  /** `host:port`; port 0 binds an ephemeral port. */
  address: string;
  maxConnections?: number;
  /** Add Node's process metrics (prom-client's defaults) unless the registry has them. Default true. */
  collectDefaults?: boolean;
  log?: Logger;
}

export interface MetricsServer {
  start(): Promise<string>;
  stop(): Promise<void>;
  readonly address: string | undefined;
}

function answer(res: ServerResponse, status: number, type: string, body: string, head: boolean): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(head ? undefined : body);
}

export function createMetricsServer(registry: Registry, options: MetricsServerOptions): MetricsServer {
  if (options.collectDefaults !== false) registerNodeMetrics(registry);
  const listenAddress = options.address;
  // A malformed address fails here, at creation, not later at start().
  splitAddress(listenAddress);
  let address: string | undefined;
  let stopping: Promise<void> | undefined;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    const head = req.method === 'HEAD';
    if (path !== METRICS_PATH) return answer(res, 404, 'text/plain; charset=utf-8', `not found: ${path}; metrics are at ${METRICS_PATH}\n`, head);
    if (req.method !== 'GET' && !head) {
      res.setHeader('Allow', 'GET, HEAD');
      return answer(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', head);
    }
    try {
      answer(res, 200, registry.contentType, await registry.metrics(), head);
    } catch (err) {
      options.log?.error({ err }, 'metrics collection failed');
      answer(res, 500, 'text/plain; charset=utf-8', 'metrics collection failed\n', head);
    }
  }

  const server = createServer({ requestTimeout: SCRAPE_TIMEOUT_MS, headersTimeout: SCRAPE_TIMEOUT_MS }, (req, res) => void handle(req, res));
  server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;

  return {
    get address() {
      return address;
    },
    async start() {
      address = await listenOn(server, listenAddress);
      return address;
    },
    stop() {
      stopping ??= server.listening ? new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }) : Promise.resolve();
      return stopping;
    },
  };
}
