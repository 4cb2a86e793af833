/**
 * `svc context delete NAME`: removes a context; when it was the current one,
 * none is current afterwards.
 */
import { SvcError } from '../../errors/svc-error.js';
import { defineCommand } from '../command.js';
import { checkContextName, contextFilePath, readContexts, writeContexts } from '../contexts.js';
import { EXIT } from '../exit-codes.js';

export const contextDeleteCommand = defineCommand({
  path: ['context', 'delete'],
  summary: 'Delete a context.',
  description: 'When it was the current context, no context is current afterwards: commands fall back to the configured server addresses.',
  args: [{ name: 'NAME', description: 'The context to delete.' }],
  flags: {},
  examples: [{ description: 'Forget an old server', command: 'svc context delete old-staging' }],
  async run({ args: [name = ''], io }) {
    checkContextName(name);
    const path = contextFilePath(io.env, io.home);
    const file = readContexts(path);
    if (!Object.hasOwn(file.contexts, name)) throw new SvcError('NOT_FOUND', `no context named '${name}' in ${path}`, { context: name });
    const contexts = Object.fromEntries(Object.entries(file.contexts).filter(([other]) => other !== name));
    const current = file.current_context === name ? undefined : file.current_context;
    writeContexts(path, { contexts, ...(current === undefined ? {} : { current_context: current }) });
    io.out(`deleted context ${name}${file.current_context === name ? '; no context is current now' : ''}\n`);
    return EXIT.ok;
  },
});
