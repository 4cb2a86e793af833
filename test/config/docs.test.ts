import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { renderConfigDocs } from '../../src/config/docs.js';

it('docs/configuration.md is the one generated from the schema (run `npm run docs:config`)', () => {
  const committed = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  assert.equal(committed, renderConfigDocs());
});
