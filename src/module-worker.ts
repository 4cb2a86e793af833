/**
 * Starts a worker thread from a module beside the caller: the `.js` file in
 * the compiled build (dist), the `.ts` file when running from source under
 * tsx. Node 20 does not run `--import` hooks in worker threads
 * (privatenumber/tsx#354), so under tsx the thread registers tsx itself
 * before importing its module.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `name` (without extension) next to `importMetaUrl`, with the caller's own extension. */
export function siblingModule(importMetaUrl: string, name: string): URL {
  return new URL(`./${name}${extname(fileURLToPath(importMetaUrl))}`, importMetaUrl);
}

export function startModuleWorker(url: URL, options: WorkerOptions): Worker {
  if (extname(url.pathname) !== '.ts') return new Worker(url, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}
