/**
 * The bash completion script: the command tree written out as `case`
 * tables, and one function that walks the words typed so far to the
 * command they name and offers its subcommands, flags, flag values or files.
 */
import type { CompletionModel, ValueCompletion } from './completion-model.js';

/** Single-quoted for the shell; the words here are command names, flags and choices. */
function quote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function valueWord(completion: ValueCompletion): string {
  if (completion.kind === 'words') return `WORDS ${completion.words.join(' ')}`;
  return completion.kind === 'file' ? 'FILE' : 'VALUE';
}

export function bashCompletion(model: CompletionModel): string {
  const children = model.groups.map((g) => `    ${quote(g.path)}) echo ${quote(g.children.map((c) => c.name).join(' '))} ;;`);
  const flags = model.commands.map((c) => `    ${quote(c.path)}) echo ${quote(c.flags.flatMap((f) => [`--${f.name}`, ...(f.short === undefined ? [] : [`-${f.short}`])]).join(' '))} ;;`);
  const values = model.commands.flatMap((c) =>
    c.flags.flatMap((f) => {
      if (f.value === undefined) return [];
      const names = [`--${f.name}`, ...(f.short === undefined ? [] : [`-${f.short}`])].map((name) => quote(`${c.path}|${name}`));
      return [`    ${names.join('|')}) echo ${quote(valueWord(f.value.completion))} ;;`];
    }),
  );
  const args = model.commands.flatMap((c) => {
    const [first] = c.args;
    return first === undefined || first.completion.kind === 'free' ? [] : [`    ${quote(c.path)}) echo ${quote(valueWord(first.completion))} ;;`];
  });
  return `# bash completion for svc
#   this shell:   source <(svc completion bash)
#   every shell:  svc completion bash > ~/.local/share/bash-completion/completions/svc

__svc_children() {
  case "$1" in
${children.join('\n')}
  esac
}

__svc_flags() {
  case "$1" in
${flags.join('\n')}
  esac
}

# How the value of flag $2 of command $1 completes: WORDS and the words, FILE, or VALUE (free text).
__svc_value() {
  case "$1|$2" in
${values.join('\n')}
  esac
}

# How the arguments of command $1 complete, as __svc_value says.
__svc_args() {
  case "$1" in
${args.join('\n')}
  esac
}

_svc() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" path="" word value i
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ " $(__svc_children "$path") " == *" $word "* ]] || break
    path="\${path:+$path }$word"
  done
  if [[ -n "$(__svc_children "$path")" ]]; then
    COMPREPLY=($(compgen -W "$(__svc_children "$path") --help -h" -- "$cur"))
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(__svc_flags "$path")" -- "$cur"))
    return 0
  fi
  value="$(__svc_value "$path" "$prev")"
  [[ -n "$value" ]] || value="$(__svc_args "$path")"
  case "$value" in
    WORDS*) COMPREPLY=($(compgen -W "\${value#WORDS }" -- "$cur")) ;;
    FILE) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
  esac
  return 0
}

complete -F _svc svc
`;
}
