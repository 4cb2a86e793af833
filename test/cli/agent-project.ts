/**
 * Agent projects as `svc new agent` writes them, installed the way npm
 * installs them, without a registry: the SDK from the tarball `npm pack`
 * makes of packages/svc-agent-sdk (unpacked into node_modules, as npm does),
 * the pinned AssemblyScript from the repository's own install. And an `svc`
 * on the PATH (the CLI from source) for the project's test.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runCli } from '../../src/cli/cli.js';
import { SVC_COMMAND } from '../helpers/svc-command.js';
import { memoryIo } from './memory-io.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ASSEMBLYSCRIPT = dirname(fileURLToPath(import.meta.resolve('assemblyscript/package.json')));

/** Packs the SDK into `dir`; answers the tarball's path. */
export async function packSdk(dir: string): Promise<string> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir, join(ROOT, 'packages', 'svc-agent-sdk')], { cwd: dir });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  if (packed === undefined) throw new Error('npm pack packed nothing');
  return join(dir, packed.filename);
}

/** A directory holding an `svc` that runs this checkout's CLI; put it first on the PATH. */
export function svcBin(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'svc'), `#!/bin/sh\nexec "${process.execPath}" ${SVC_COMMAND.map((a) => `"${a}"`).join(' ')} "$@"\n`);
  chmodSync(join(bin, 'svc'), 0o755);
  return bin;
}

/** `svc new agent NAME --sdk file:TARBALL` in `parent`, then its dependencies put in place. */
export async function newAgentProject(parent: string, name: string, tarball: string): Promise<string> {
  const io = memoryIo({ cwd: parent });
  const code = await runCli(['new', 'agent', name, '--sdk', `file:${tarball}`], io);
  if (code !== 0) throw new Error(`svc new agent exited ${code}: ${io.stderr}`);
  const project = join(parent, name);
  const modules = join(project, 'node_modules');
  mkdirSync(join(modules, 'svc-agent-sdk'), { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', join(modules, 'svc-agent-sdk'), '--strip-components=1']);
  symlinkSync(ASSEMBLYSCRIPT, join(modules, 'assemblyscript'));
  mkdirSync(join(modules, '.bin'));
  symlinkSync('../assemblyscript/bin/asc.js', join(modules, '.bin', 'asc'));
  return project;
}

/**
 * Runs `npm run SCRIPT` in the project with `bin` first on the PATH; never
 * rejects. Without this test runner's NODE_TEST_CONTEXT, which would make
 * the project's own `node --test` report to it instead of printing.
 */
export async function npmRun(project: string, script: string, bin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  try {
    const { stdout, stderr } = await run('npm', ['run', script], { cwd: project, env: { ...env, PATH: `${bin}:${env.PATH ?? ''}` }, timeout: 240_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
