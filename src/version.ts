import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package version, found by walking up from this file (it runs from `src/` under tsx and from `dist/src/` once built). */
export const VERSION: string = (() => {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof pkg === 'object' && pkg !== null && 'name' in pkg && pkg.name === 'svc-agent-server' && 'version' in pkg) return String(pkg.version);
  }
  return '0.0.0';
})();
