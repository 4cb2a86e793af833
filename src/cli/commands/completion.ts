/**
 * `svc completion bash|zsh`: prints the shell's completion script for every
 * command, flag and flag value of this version of svc.
 */
import { bashCompletion } from '../completion-bash.js';
import { completionModel } from '../completion-model.js';
import { zshCompletion } from '../completion-zsh.js';
import { defineCommand, UsageError } from '../command.js';
import { EXIT } from '../exit-codes.js';

const SHELLS = { bash: bashCompletion, zsh: zshCompletion } as const;

export const completionCommand = defineCommand({
  path: ['completion'],
  summary: 'Print the shell completion script for bash or zsh.',
  description: `Completes commands, subcommands, flags, the values of flags that take a fixed set (-o, --type, ...)
and file names where a command takes a file.`,
  args: [{ name: 'SHELL', description: 'bash or zsh.', choices: Object.keys(SHELLS) }],
  flags: {},
  examples: [
    { description: 'Complete svc in this bash', command: 'source <(svc completion bash)' },
    { description: 'In every bash', command: 'svc completion bash > ~/.local/share/bash-completion/completions/svc' },
    { description: 'In every zsh (a directory of $fpath)', command: 'svc completion zsh > "${fpath[1]}/_svc"' },
  ],
  async run({ args: [shell = ''], io, tree }) {
    if (!Object.hasOwn(SHELLS, shell)) throw new UsageError(`completion supports bash and zsh, not '${shell}'`);
    io.out(SHELLS[shell as keyof typeof SHELLS](completionModel(tree)));
    return EXIT.ok;
  },
});
