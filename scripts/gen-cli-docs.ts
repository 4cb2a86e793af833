/**
 * Writes the command reference of docs/cli.md from the command table (the
 * rest of the page is written by hand).
 *
 *   npm run docs:cli
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { commandTree } from '../src/cli/cli.js';
import { withCommandReference } from '../src/cli/cli-docs.js';

const target = fileURLToPath(new URL('../docs/cli.md', import.meta.url));
writeFileSync(target, withCommandReference(readFileSync(target, 'utf8'), commandTree()));
console.log(`wrote ${target}`);
