/**
 * OCSP stapling on the HTTPS listener (`enable_ocsp_stapling`): the
 * certificate's status, fetched from the responder its Authority
 * Information Access names, handed to clients that ask for it in the
 * handshake. Fetched at start, again every `REFRESH_MS` (sooner after a
 * failure) and when the certificate is reloaded. Until a response is in
 * hand, nothing is stapled and clients check for themselves.
 */
import type { Clock, TimerHandle } from '../../../supervisors/index.js';
import type { Logger } from '../../telemetry/logger.js';
import { ocspRequest, ocspResponderUrl, ocspResponseStatus } from './ocsp-der.js';
import type { TlsMaterial } from './tls-material.js';

/** Responders update hourly or daily; an hour keeps a stapled status at most that old. */
export const REFRESH_MS = 3_600_000;
/** After a failed fetch. */
export const RETRY_MS = 60_000;
/** One fetch may take this long. */
export const FETCH_TIMEOUT_MS = 10_000;

export interface OcspStapler {
  /** The DER response to staple, if one is in hand. */
  response(): Buffer | undefined;
  /** Called after each successful fetch; answers the unsubscribe. */
  onResponse(listener: () => void): () => void;
  close(): void;
}

export function createOcspStapler(material: TlsMaterial, options: { clock: Clock; log?: Logger }): OcspStapler {
  const { clock, log } = options;
  let current: Buffer | undefined;
  let timer: TimerHandle | undefined;
  let closed = false;
  let generation = 0;
  const listeners = new Set<() => void>();

  function schedule(delayMs: number): void {
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = closed ? undefined : clock.setTimeout(() => void refresh(), delayMs);
  }

  async function fetchResponse(url: string, body: Buffer): Promise<Buffer> {
    const abort = new AbortController();
    const timeout = clock.setTimeout(() => abort.abort(), FETCH_TIMEOUT_MS);
    try {
      const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/ocsp-request' }, body: new Uint8Array(body), signal: abort.signal });
      if (!answer.ok) throw new Error(`the responder answered HTTP ${answer.status}`);
      return Buffer.from(await answer.arrayBuffer());
    } finally {
      clock.clearTimeout(timeout);
    }
  }

  async function refresh(): Promise<void> {
    const mine = ++generation;
    const { leaf, issuer } = material.chain();
    const url = ocspResponderUrl(leaf);
    if (url === undefined || issuer === undefined) {
      log?.warn({ responder: url, issuer: issuer?.subject }, 'OCSP stapling needs a responder URL in the certificate and its issuer in tls_cert_file or tls_ca_file');
      current = undefined;
      return;
    }
    try {
      const response = await fetchResponse(url, ocspRequest(leaf, issuer));
      const status = ocspResponseStatus(response);
      if (status !== 0) throw new Error(`the responder refused the request (status ${status})`);
      // A reload while fetching started a newer fetch: this answer is about the old certificate.
      if (mine !== generation || closed) return;
      current = response;
      schedule(REFRESH_MS);
      for (const listener of listeners) listener();
    } catch (err) {
      if (mine !== generation || closed) return;
      log?.warn({ responder: url, err: err instanceof Error ? err.message : String(err) }, 'OCSP response not fetched; retrying');
      schedule(RETRY_MS);
    }
  }

  const unsubscribe = material.onReload(() => {
    current = undefined;
    void refresh();
  });
  void refresh();

  return {
    response: () => current,
    onResponse(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      closed = true;
      unsubscribe();
      if (timer !== undefined) clock.clearTimeout(timer);
      listeners.clear();
    },
  };
}
