/**
 * `observability.otlp_endpoint` names both the collector and the protocol:
 *   http://host:4318, https://host:4318  OTLP/HTTP (JSON), POST {path}/v1/traces
 *   grpc://host:4317                     OTLP/gRPC without TLS
 *   grpcs://host:4317                    OTLP/gRPC over TLS
 * An empty value means no export. Anything else stops the server at start,
 * naming the key, rather than silently exporting nowhere.
 */
import { ConfigError } from '../config/load.js';

export const OTLP_ENDPOINT_KEY = 'observability.otlp_endpoint';
/** The OTLP/HTTP path of traces (OTLP specification, "OTLP/HTTP Request"). */
export const OTLP_TRACES_PATH = '/v1/traces';
/** The collector's registered OTLP/gRPC port, used when a grpc:// endpoint names none. */
export const OTLP_GRPC_DEFAULT_PORT = 4317;

export type OtlpEndpoint =
  | { protocol: 'http'; url: string }
  /** `url` as the gRPC exporter takes it: http:// means plaintext, https:// means TLS. */
  | { protocol: 'grpc'; url: string };

export function parseOtlpEndpoint(raw: string): OtlpEndpoint | undefined {
  const text = raw.trim();
  if (text === '') return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(OTLP_ENDPOINT_KEY, `not a URL: ${JSON.stringify(raw)} (expected http(s)://host:4318 or grpc(s)://host:4317)`);
  }
  if (url.hostname === '') throw new ConfigError(OTLP_ENDPOINT_KEY, `no host in ${JSON.stringify(raw)}`);
  switch (url.protocol) {
    case 'http:':
    case 'https:': {
      const base = url.pathname.replace(/\/+$/, '');
      const path = base.endsWith(OTLP_TRACES_PATH) ? base : `${base}${OTLP_TRACES_PATH}`;
      return { protocol: 'http', url: `${url.protocol}//${url.host}${path}${url.search}` };
    }
    case 'grpc:':
    case 'grpcs:': {
      if (url.pathname !== '' && url.pathname !== '/') throw new ConfigError(OTLP_ENDPOINT_KEY, `a gRPC endpoint has no path: ${JSON.stringify(raw)}`);
      const scheme = url.protocol === 'grpcs:' ? 'https' : 'http';
      // `hostname` keeps an IPv6 address's brackets.
      return { protocol: 'grpc', url: `${scheme}://${url.hostname}:${url.port || OTLP_GRPC_DEFAULT_PORT}` };
    }
    default:
      throw new ConfigError(OTLP_ENDPOINT_KEY, `unsupported scheme ${url.protocol} (expected http, https, grpc or grpcs)`);
  }
}
