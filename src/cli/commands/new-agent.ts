/**
 * `svc new agent NAME`: writes a new AssemblyScript agent project into
 * ./NAME (or --dir), ready for `npm install && npm test`.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { SvcError } from '../../errors/svc-error.js';
import { agentProjectFiles, ASSEMBLYSCRIPT_VERSION, PROJECT_NAME } from '../agent-template.js';
import { defineCommand, UsageError } from '../command.js';
import { EXIT } from '../exit-codes.js';
import { sdkPackageDir } from '../sdk-package.js';

export const newAgentCommand = defineCommand({
  path: ['new', 'agent'],
  summary: 'Create an AssemblyScript agent project, ready to build, test and deploy.',
  description: `Writes package.json (assemblyscript ${ASSEMBLYSCRIPT_VERSION} pinned, the svc agent SDK as a dependency),
asconfig.json (the compiler options the agent ABI needs), assembly/index.ts (an agent that answers
requests), a test that checks the built module with 'svc check', and a README. The SDK is taken by
path from this svc installation unless --sdk names another source: a packed tarball
(npm pack packages/svc-agent-sdk) or a version from a registry.`,
  args: [{ name: 'NAME', description: 'The project and package name: lower case letters, digits, ., _ or -.' }],
  flags: {
    dir: { type: 'string', short: 'd', value: 'DIR', description: 'Where to write the project (default: ./NAME); it must not exist or be empty.' },
    sdk: { type: 'string', value: 'SPEC', description: 'The SDK dependency as npm takes it: file:PATH, a tarball, a version (default: this installation\'s packages/svc-agent-sdk).' },
  },
  examples: [
    { description: 'A new agent, built and checked', command: 'svc new agent greeter && cd greeter && npm install && npm test' },
    { description: 'Using a packed SDK', command: 'svc new agent greeter --sdk file:../svc-agent-sdk-0.1.0.tgz' },
  ],
  async run({ values, args: [name = ''], io }) {
    if (!PROJECT_NAME.test(name)) throw new UsageError(`a project name is 1 to 64 lower case letters, digits, '.', '_' or '-', starting with a letter or digit; got '${name}'`);
    const dir = resolve(io.cwd, values.dir ?? name);
    if (existsSync(dir) && readdirSync(dir).length > 0) throw new SvcError('ALREADY_EXISTS', `${dir} exists and is not empty`, { path: dir });
    const sdkDir = sdkPackageDir();
    const sdkSpec = values.sdk ?? (sdkDir === undefined ? undefined : `file:${sdkDir}`);
    if (sdkSpec === undefined) throw new UsageError('this installation has no packages/svc-agent-sdk: name the SDK with --sdk');
    for (const [path, content] of Object.entries(agentProjectFiles(name, sdkSpec))) {
      const file = join(dir, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content, { flag: 'wx' });
    }
    const where = relative(io.cwd, dir) || '.';
    io.out(`created ${where} (agent ${name})\nnext:\n  cd ${where}\n  npm install\n  npm test\n  npm run deploy\n`);
    return EXIT.ok;
  },
});
