import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderConfigDocs } from '../src/config/docs.js';

const target = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
writeFileSync(target, renderConfigDocs());
console.log(`wrote ${target}`);
