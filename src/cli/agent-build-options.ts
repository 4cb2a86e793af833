/**
 * The AssemblyScript compiler options an agent needs to meet the agent ABI,
 * in one place for the example agents (scripts/build-examples.ts) and the
 * projects `svc new agent` writes (their asconfig.json). Each one is forced
 * by the ABI or chosen by measurement:
 * - AS 0.28 enables sign-extension, mutable-globals, nontrapping-f2i and
 *   bulk-memory by default; the ABI forbids only the last. Nothing else is
 *   enabled, so SIMD, threads, reference types, GC and the rest stay off.
 * - The memory needs a declared maximum, at most runtime.max_memory_pages
 *   (1024); 16 pages suit a small agent.
 * - `_initialize` makes the module a reactor: top-level code runs when the
 *   host calls it, under the startup timeout, and there is no start section.
 * - `minimal` (TLSF plus a collector that runs only when called) is 7 KiB
 *   smaller than `incremental`; the SDK collects between messages. `stub` is
 *   smaller still but never frees, so a long-lived agent would run out.
 * - The SDK's abort replaces `env.abort`, the one import asc adds on its own;
 *   `~lib/svc-agent-sdk/` is how asc names the files of an imported package.
 */
export const AGENT_MAXIMUM_MEMORY_PAGES = 16;

export const AGENT_ASC_OPTIONS = {
  disable: ['bulk-memory'],
  maximumMemory: AGENT_MAXIMUM_MEMORY_PAGES,
  exportStart: '_initialize',
  runtime: 'minimal',
  optimizeLevel: 3,
  shrinkLevel: 1,
  use: ['abort=~lib/svc-agent-sdk/abort/svcAbort'],
} as const;

/** The same options as asc command-line flags. */
export function ascFlags(options: Readonly<Record<string, string | number | readonly string[]>> = AGENT_ASC_OPTIONS): string[] {
  return Object.entries(options).flatMap(([name, value]) => (Array.isArray(value) ? value.flatMap((v: string) => [`--${name}`, v]) : [`--${name}`, String(value)]));
}
