/**
 * Where the AssemblyScript SDK package of this svc lives
 * (`packages/svc-agent-sdk`), found by walking up from this file: it runs
 * from `src/cli/` under tsx and from `dist/src/cli/` once built. A project
 * `svc new agent` writes depends on it by path unless told otherwise.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SDK_PACKAGE_NAME = 'svc-agent-sdk';

export function sdkPackageDir(): string | undefined {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'packages', SDK_PACKAGE_NAME, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === SDK_PACKAGE_NAME) return dirname(manifest);
  }
  return undefined;
}
