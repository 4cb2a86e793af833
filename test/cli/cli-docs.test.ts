/**
 * docs/cli.md's command reference is the one the command table writes (run
 * `npm run docs:cli` after changing a command), and it covers every command
 * and every flag.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { commandTree } from '../../src/cli/cli.js';
import { withCommandReference } from '../../src/cli/cli-docs.js';
import { flagsOf } from '../../src/cli/command.js';

const page = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');

it('docs/cli.md holds the reference generated from the command table (npm run docs:cli)', () => {
  assert.equal(page, withCommandReference(page, commandTree()));
});

it('the reference has a section for every command, naming every flag', () => {
  for (const command of commandTree().commands) {
    const heading = new RegExp(`^#{3,4} svc ${command.path.join(' ')}$`, 'm');
    assert.match(page, heading);
    const section = page.slice(page.search(heading)).split(/\n#{3,4} svc /)[0] ?? '';
    for (const flag of Object.keys(flagsOf(command))) assert.ok(section.includes(`\`--${flag}`), `svc ${command.path.join(' ')} --${flag}`);
  }
});
