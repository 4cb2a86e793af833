/**
 * How tests start the `svc` command as a process. `npm test` builds first and
 * sets SVC_TEST_BUILT=1, so every process starts from the compiled `dist/`,
 * what `npm start` and the installed `svc` run; a test file run on its own
 * runs the sources through tsx instead, never a stale build. Under tsx each
 * process transpiles the CLI and server again: about 1 s more CPU per `svc`
 * run, several for `svc start`.
 */
import { fileURLToPath } from 'node:url';

const SOURCE_MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const BUILT_MAIN = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));
/** Resolved here: the child may run in a temporary directory with no node_modules. */
const TSX = import.meta.resolve('tsx');

/** Node's arguments before the command's own: `[...SVC_COMMAND, 'start']`. */
export const SVC_COMMAND: readonly string[] = process.env.SVC_TEST_BUILT === '1' ? [BUILT_MAIN] : ['--import', TSX, SOURCE_MAIN];
