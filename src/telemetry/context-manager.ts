/**
 * The active OpenTelemetry context follows the async call chain through
 * Node's AsyncLocalStorage, so a span started in a request handler is the
 * parent of spans started after an `await` and its ids reach the log lines
 * written there. OpenTelemetry's own manager lives in
 * `@opentelemetry/context-async-hooks`, which sdk-node installs only through
 * its global `NodeSDK.start()` and does not re-export; this one is the same
 * idea in a few lines, without becoming a direct dependency.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { context, ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';

export function createAsyncContextManager(): ContextManager {
  const storage = new AsyncLocalStorage<Context>();
  const manager: ContextManager = {
    active: () => storage.getStore() ?? ROOT_CONTEXT,
    with(ctx, fn, thisArg, ...args) {
      return storage.run(ctx, () => fn.apply(thisArg, args));
    },
    bind<T>(ctx: Context, target: T): T {
      // Only functions are bound: the server never hands event emitters to OpenTelemetry.
      if (typeof target !== 'function') return target;
      const fn = target as (...args: unknown[]) => unknown;
      return function bound(this: unknown, ...args: unknown[]) {
        return storage.run(ctx, () => fn.apply(this, args));
      } as T;
    },
    enable: () => manager,
    disable() {
      storage.disable();
      return manager;
    },
  };
  return manager;
}

let installed = false;

/**
 * Makes `context.active()` async-aware for the whole process. Idempotent; if
 * something else (an OpenTelemetry preload) installed a manager first, that
 * one stays, and it tracks the same async chain.
 */
export function installContextManager(): void {
  if (installed) return;
  installed = true;
  context.setGlobalContextManager(createAsyncContextManager());
}
