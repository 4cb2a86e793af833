/**
 * Compiles the tests with the sources into dist-test/ so that `npm test` runs
 * plain JavaScript: each test file is its own process, and through the tsx
 * loader each one transpiled and resolved the server's modules again (importing
 * the server took about 3.8 s of CPU instead of 1.7 s). One tsc run
 * type-checks the whole project (what `npm run typecheck` checks) and emits it.
 *
 * dist-test/ mirrors the repository: every file tsc does not emit from a
 * TypeScript source is a symbolic link to the original, so a test's paths
 * relative to its own file (`../../docs/`, `../fixtures/`, a `.ts` helper
 * started under tsx) reach the same files as from test/. JavaScript sources
 * (the dashboard) are linked too: tests load them as written, not as tsc
 * reprints them. The directory is removed first, so nothing stale survives.
 *
 *   npm run build:tests
 */
import { spawnSync } from 'node:child_process';
import { lstat, mkdir, readdir, rm, symlink } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const TEST_BUILD_DIR = join(ROOT, 'dist-test');
/** Not mirrored: the repository's metadata, the installed packages (found above dist-test/ anyway), the output itself. */
const SKIPPED = new Set(['.git', 'node_modules', 'dist-test']);
/**
 * Linked even where they do not exist yet: `npm test` builds them beside
 * this script (a fresh clone has no dist/ when the mirror is made).
 */
const BUILT_BESIDE = ['dist'];

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

async function link(target: string, path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
  await symlink(relative(dirname(path), target), path);
}

/** Whether tsc compiles anything beneath `dir`: a `.ts` source that is not only declarations. */
async function hasTypeScript(dir: string): Promise<boolean> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() ? await hasTypeScript(path) : entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) return true;
  }
  return false;
}

/**
 * Links what tsc did not compile from TypeScript: a whole directory where tsc
 * wrote nothing or only copies of JavaScript (replaced by the originals), else
 * file by file.
 */
async function mirror(relativeDir: string): Promise<void> {
  for (const entry of await readdir(join(ROOT, relativeDir), { withFileTypes: true })) {
    if (relativeDir === '' && SKIPPED.has(entry.name)) continue;
    const source = join(ROOT, relativeDir, entry.name);
    const output = join(TEST_BUILD_DIR, relativeDir, entry.name);
    if (entry.isDirectory() && (await exists(output)) && (await hasTypeScript(source))) await mirror(join(relativeDir, entry.name));
    else await link(source, output);
  }
}

function compile(): void {
  const tsc = fileURLToPath(import.meta.resolve('typescript/bin/tsc'));
  const result = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.test.json')], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`tsc failed (${result.signal ?? `exit ${result.status}`})`);
}

async function buildTests(): Promise<void> {
  await rm(TEST_BUILD_DIR, { recursive: true, force: true });
  compile();
  await mkdir(TEST_BUILD_DIR, { recursive: true });
  await mirror('');
  for (const name of BUILT_BESIDE) if (!(await exists(join(TEST_BUILD_DIR, name)))) await link(join(ROOT, name), join(TEST_BUILD_DIR, name));
}

buildTests().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
