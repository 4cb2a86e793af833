/**
 * `svc context current`: the name of the current context.
 */
import { defineCommand } from '../command.js';
import { contextFilePath, readContexts } from '../contexts.js';
import { EXIT } from '../exit-codes.js';

export const contextCurrentCommand = defineCommand({
  path: ['context', 'current'],
  summary: 'Print the name of the current context; exit 5 when none is set.',
  args: [],
  flags: {},
  examples: [{ description: 'Which server am I talking to?', command: 'svc context current' }],
  async run({ io }) {
    const current = readContexts(contextFilePath(io.env, io.home)).current_context;
    if (current === undefined) {
      io.err('svc: no current context; commands use the configured server addresses\n');
      return EXIT.not_found;
    }
    io.out(`${current}\n`);
    return EXIT.ok;
  },
});
