/**
 * Secrets the server makes for itself and keeps in its data directory when
 * the operator gives none: the key salt and the token signing key. Written
 * once, mode 0600, in a directory only the owner reads; read back at every
 * start so keys and tokens survive restarts.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SECURITY_DIR = 'security';

/** The content of `<dataDir>/security/<name>`, made with `make` the first time. */
export function dataDirSecret(dataDir: string, name: string, make: () => string): string {
  const dir = join(dataDir, SECURITY_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = join(dir, name);
  if (!existsSync(file)) {
    // `wx`: two servers starting on one data directory cannot both write it.
    try {
      writeFileSync(file, make(), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return readFileSync(file, 'utf8');
}
