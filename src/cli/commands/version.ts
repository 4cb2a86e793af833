/**
 * `svc version` (also `svc --version`).
 */
import { VERSION } from '../../version.js';
import { defineCommand } from '../command.js';
import { EXIT } from '../exit-codes.js';

export const versionCommand = defineCommand({
  path: ['version'],
  summary: 'Print the version of svc.',
  args: [],
  flags: {},
  examples: [{ description: 'Print the version', command: 'svc version' }],
  async run({ io }) {
    io.out(`${VERSION}\n`);
    return EXIT.ok;
  },
});
