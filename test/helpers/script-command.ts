/**
 * How tests start a script of the project's own (a helper beside the test, a
 * script in scripts/) as a process. `npm test` runs the tests compiled, from
 * dist-test/, and the script's compiled sibling runs as it is; a test file run
 * on its own through tsx runs the script's TypeScript source through tsx.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Resolved here: the child may run in a temporary directory with no node_modules. */
const TSX = import.meta.resolve('tsx');

/** Node's arguments that run `path` (relative to `importMetaUrl`, without extension): `[...command, ...args]`. */
export function scriptCommand(importMetaUrl: string, path: string): string[] {
  const file = fileURLToPath(new URL(`${path}${extname(fileURLToPath(importMetaUrl))}`, importMetaUrl));
  return extname(file) === '.ts' ? ['--import', TSX, file] : [file];
}
