/**
 * Builds the AssemblyScript example agents (examples/agents/*.ts) into
 * examples/build/<name>.wasm with the flags the agent ABI needs (docs/agent-abi.md).
 *
 *   npm run build:examples [-- --wat]
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AGENT_MAXIMUM_MEMORY_PAGES, ascFlags } from '../src/cli/agent-build-options.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const AGENTS_DIR = join(ROOT, 'examples', 'agents');
export const BUILD_DIR = join(ROOT, 'examples', 'build');
export const SDK_DIR = join(ROOT, 'packages', 'svc-agent-sdk');

/** Pages of 64 KiB; far below `max_memory_pages` (1024) and enough for the examples. */
export const EXAMPLE_MAXIMUM_MEMORY_PAGES = AGENT_MAXIMUM_MEMORY_PAGES;

/**
 * The ABI's options (src/cli/agent-build-options.ts explains each), the SDK
 * found as a package in packages/ as an installed project finds it in
 * node_modules/, and no colours in captured diagnostics.
 */
export const ASC_FLAGS: readonly string[] = [...ascFlags(), '--path', 'packages', '--noColors'];

export interface BuiltExample {
  name: string;
  wasmPath: string;
  size: number;
}

export interface BuildOptions {
  /** Also write examples/build/<name>.wat. */
  wat?: boolean;
  /** Only these agents (file names without `.ts`); all by default. */
  only?: readonly string[];
}

export async function listExampleAgents(): Promise<string[]> {
  const files = await readdir(AGENTS_DIR);
  return files.filter((f) => f.endsWith('.ts')).map((f) => basename(f, '.ts')).sort();
}

function ascArgs(name: string, wat: boolean): string[] {
  return [
    relative(ROOT, join(AGENTS_DIR, `${name}.ts`)),
    '--baseDir', ROOT,
    '--outFile', relative(ROOT, join(BUILD_DIR, `${name}.wasm`)),
    ...(wat ? ['--textFile', relative(ROOT, join(BUILD_DIR, `${name}.wat`))] : []),
    ...ASC_FLAGS,
  ];
}

/*
 * asc runs in one plain child Node process through its JS API. Loaded under the tsx
 * loader (which runs this script), binaryen's 13 MB bundle takes about 8 s to import
 * instead of 0.4 s. One process for all agents pays the import and the JIT warm-up
 * once; two processes in parallel measured slower on two busy cores.
 */
const ASC_DRIVER = `
const [ascUrl, jobs] = process.argv.slice(1);
const { default: asc } = await import(ascUrl);
for (const { name, args } of JSON.parse(jobs)) {
  let diagnostics = '';
  const sink = { write: (chunk) => { diagnostics += String(chunk); } };
  const { error } = await asc.main(args, { stdout: sink, stderr: sink });
  if (error) {
    process.stderr.write('asc failed for examples/agents/' + name + '.ts: ' + error.message + '\\n' + diagnostics);
    process.exit(1);
  }
  process.stderr.write(diagnostics);
}
`;

function runAsc(jobs: Array<{ name: string; args: string[] }>): Promise<void> {
  const ascUrl = import.meta.resolve('assemblyscript/asc');
  const child = spawn(process.execPath, ['--input-type=module', '-e', ASC_DRIVER, ascUrl, JSON.stringify(jobs)], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) {
        // Warnings: asc succeeded, but the author should see them.
        if (stderr !== '') process.stderr.write(stderr);
        resolve();
      } else reject(new Error(stderr.trim() || `asc exited with ${signal ?? code}`));
    });
  });
}

/** Compiles the example agents; throws on the first compile error. */
export async function buildExamples(options: BuildOptions = {}): Promise<BuiltExample[]> {
  await mkdir(BUILD_DIR, { recursive: true });
  const names = options.only ? [...options.only] : await listExampleAgents();
  await runAsc(names.map((name) => ({ name, args: ascArgs(name, options.wat ?? false) })));
  return Promise.all(
    names.map(async (name) => {
      const wasmPath = join(BUILD_DIR, `${name}.wasm`);
      return { name, wasmPath, size: (await stat(wasmPath)).size };
    }),
  );
}

async function newestSourceMs(): Promise<number> {
  const dirs = [AGENTS_DIR, SDK_DIR];
  let newest = 0;
  for (const dir of dirs) {
    for (const file of await readdir(dir)) {
      if (file.endsWith('.ts')) newest = Math.max(newest, (await stat(join(dir, file))).mtimeMs);
    }
  }
  return newest;
}

/** Builds the examples unless every module exists and is newer than every source; returns the module paths by name. */
export async function ensureExamplesBuilt(): Promise<Map<string, string>> {
  const names = await listExampleAgents();
  const paths = new Map(names.map((name) => [name, join(BUILD_DIR, `${name}.wasm`)]));
  const sourcesMs = await newestSourceMs();
  const outputsMs = await Promise.all([...paths.values()].map((p) => stat(p).then((s) => s.mtimeMs, () => 0)));
  if (outputsMs.some((ms) => ms < sourcesMs)) await buildExamples();
  return paths;
}

async function main(): Promise<void> {
  const started = performance.now();
  const built = await buildExamples({ wat: process.argv.includes('--wat') });
  for (const b of built) console.log(`${relative(ROOT, b.wasmPath)}  ${b.size} bytes`);
  console.log(`built ${built.length} examples in ${Math.round(performance.now() - started)} ms`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
