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
  const files = model.commands.filter((c) => c.args.some((a) => a.completion.kind === 'file')).map((c) => quote(c.path));
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

__svc_file_args() {
  case "$1" in
    ${files.length === 0 ? "''" : files.join('|')}) return 0 ;;
  esac
  return 1
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
  value="$(__svc_value "$path" "$prev")"
  case "$value" in
    WORDS*) COMPREPLY=($(compgen -W "\${value#WORDS }" -- "$cur")); return 0 ;;
    FILE) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    VALUE) return 0 ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(__svc_flags "$path")" -- "$cur"))
  elif __svc_file_args "$path"; then
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
  return 0
}

complete -F _svc svc
`;
}
