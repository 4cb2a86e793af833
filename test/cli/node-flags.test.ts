import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { VERSION } from '../../src/version.js';
import { SERVER_NODE_FLAGS, V8_SEMI_SPACE_MIB } from '../../src/node-flags.js';

const root = new URL('../../', import.meta.url);
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'svc-node-flags-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A script that allocates short-lived objects until V8 has grown its young
 * generation as far as it will, then prints that generation's size in MiB.
 */
const GROW_YOUNG_GENERATION = `
import v8 from 'node:v8';
let live = [];
for (let i = 0; i < 3_000_000; i++) {
  live.push({ at: i, text: String(i) });
  if (live.length > 200_000) live = [];
}
const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
console.log(space.space_size / 1048576);
`;

async function youngGenerationMiB(command: string, args: string[]): Promise<number> {
  const { stdout } = await run(command, args, { cwd: dir });
  return Number(stdout.trim());
}

describe('the Node flags the server runs under', () => {
  const flags = SERVER_NODE_FLAGS.join(' ');
  /** The first line of the `svc` executable, in its source and once built. */
  const shebang = `#!/usr/bin/env -S node ${flags}`;
  /** The young generation's size at V8's own ceiling: two semi-spaces. */
  const ceiling = 2 * V8_SEMI_SPACE_MIB;

  it('npm start and the svc script pass them', () => {
    const scripts = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> }).scripts;
    assert.equal(scripts.start, `node ${flags} dist/src/cli/main.js start`);
    assert.equal(scripts.svc, `node ${flags} dist/src/cli/main.js`);
  });

  it('the svc executable passes them on its #! line, and the kernel runs that line', async () => {
    assert.equal(readFileSync(new URL('src/cli/main.ts', root), 'utf8').split('\n')[0], shebang);
    const script = join(dir, 'grow.mjs');
    writeFileSync(script, `${shebang}\n${GROW_YOUNG_GENERATION}`);
    chmodSync(script, 0o755);
    assert.ok((await youngGenerationMiB(script, [])) > ceiling);
  });

  it('the built svc executable runs by its #! line (npm run build makes it executable)', async () => {
    // `npm install` and `npm ci` build dist/ (the prepare script), so a checkout has it.
    const built = fileURLToPath(new URL('dist/src/cli/main.js', root));
    assert.equal(readFileSync(built, 'utf8').split('\n')[0], shebang);
    assert.equal(statSync(built).mode & 0o111, 0o111);
    const { stdout } = await run(built, ['--version'], { cwd: dir });
    assert.equal(stdout.trim(), VERSION);
  });

  it('without them V8 keeps the young generation at its own ceiling', async () => {
    const script = join(dir, 'plain.mjs');
    writeFileSync(script, GROW_YOUNG_GENERATION);
    assert.ok((await youngGenerationMiB(process.execPath, [script])) <= ceiling);
    assert.ok((await youngGenerationMiB(process.execPath, [...SERVER_NODE_FLAGS, script])) > ceiling);
  });
});
