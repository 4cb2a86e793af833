/**
 * `svc context use NAME`: makes a context the current one.
 */
import { SvcError } from '../../errors/svc-error.js';
import { defineCommand } from '../command.js';
import { checkContextName, contextFilePath, readContexts, writeContexts } from '../contexts.js';
import { EXIT } from '../exit-codes.js';

export const contextUseCommand = defineCommand({
  path: ['context', 'use'],
  summary: 'Make a context the current one.',
  description: 'Commands then connect with its server, TLS files and credentials unless --server or --context says otherwise.',
  args: [{ name: 'NAME', description: 'A context made with svc context set.' }],
  flags: {},
  examples: [{ description: 'Switch to the staging server', command: 'svc context use staging' }],
  async run({ args: [name = ''], io }) {
    checkContextName(name);
    const path = contextFilePath(io.env, io.home);
    const file = readContexts(path);
    if (!Object.hasOwn(file.contexts, name)) throw new SvcError('NOT_FOUND', `no context named '${name}' in ${path}`, { context: name });
    writeContexts(path, { ...file, current_context: name });
    io.out(`switched to context ${name}\n`);
    return EXIT.ok;
  },
});
