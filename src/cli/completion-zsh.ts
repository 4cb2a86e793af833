/**
 * The zsh completion script: `_describe` for the subcommands of a group
 * (with their summaries) and one `_arguments` spec per command for its
 * flags, their values and its arguments.
 */
import type { CompletedCommand, CompletedFlag, CompletionModel, ValueCompletion } from './completion-model.js';

/** Inside a single-quoted shell word. */
function inQuotes(text: string): string {
  return text.replaceAll("'", "'\\''");
}

/** An explanation inside `[...]` of an `_arguments` spec: brackets and backslashes escaped, on one line. */
function explanation(text: string): string {
  return inQuotes(text.replace(/\s+/g, ' ').replace(/[\\[\]]/g, '\\$&'));
}

/** A message between colons of a spec: its own colons escaped. */
function message(label: string): string {
  return inQuotes(label.replaceAll(':', '\\:'));
}

function action(completion: ValueCompletion): string {
  if (completion.kind === 'words') return `(${completion.words.join(' ')})`;
  return completion.kind === 'file' ? '_files' : ' ';
}

function flagSpec(flag: CompletedFlag): string {
  const names = flag.short === undefined ? [`--${flag.name}`] : [`-${flag.short}`, `--${flag.name}`];
  const exclusion = flag.multiple ? "'*'" : `'(${names.join(' ')})'`;
  const value = flag.value === undefined ? '' : `:${message(flag.value.label)}:${inQuotes(action(flag.value.completion))}`;
  const described = `'[${explanation(flag.description)}]${value}'`;
  return names.length === 1 ? `${exclusion}${names[0]}${described}` : `${exclusion}{${names.join(',')}}${described}`;
}

function commandCase(command: CompletedCommand): string {
  const specs = [
    ...command.flags.map(flagSpec),
    ...command.args.map((arg, i) => `'${i + 1}:${message(arg.name)}:${inQuotes(action(arg.completion))}'`),
  ];
  return `    '${inQuotes(command.path)}') _arguments -s -S \\\n      ${specs.join(' \\\n      ')} ;;`;
}

export function zshCompletion(model: CompletionModel): string {
  const children = model.groups.map(
    (g) => `    '${inQuotes(g.path)}') print -rl -- ${g.children.map((c) => `'${inQuotes(`${c.name}:${c.summary}`)}'`).join(' ')} ;;`,
  );
  return `#compdef svc
# zsh completion for svc
#   this shell:   source <(svc completion zsh)
#   every shell:  svc completion zsh > "\${fpath[1]}/_svc"   (then restart zsh)
compdef _svc svc

__svc_children() {
  case $1 in
${children.join('\n')}
  esac
}

__svc_command() {
  case $1 in
${model.commands.map(commandCase).join('\n')}
  esac
}

_svc() {
  local node='' word
  local -a children described
  integer i=2
  while (( i < CURRENT )); do
    word=\${words[i]}
    children=(\${\${(f)"$(__svc_children "$node")"}%%:*})
    (( \${children[(Ie)$word]} )) || break
    node=\${node:+$node }$word
    (( i++ ))
  done
  described=(\${(f)"$(__svc_children "$node")"})
  if (( \${#described} )); then
    _describe -t commands 'svc command' described
    return
  fi
  words=("\${words[1]}" "\${(@)words[i,-1]}")
  (( CURRENT -= i - 2 ))
  __svc_command "$node"
}

# Loaded from $fpath, this file is the body of _svc: it defines the functions, then completes.
if [ "$funcstack[1]" = "_svc" ]; then
  _svc "$@"
fi
`;
}
