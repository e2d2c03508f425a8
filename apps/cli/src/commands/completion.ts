import type { Command } from 'commander';
import { CliError, EXIT } from '../errors.js';
import { RESOURCE_TYPES } from '../resources.js';
import type { Register } from './run.js';

/** Words that may follow each command path, read from the command tree itself. */
export function completionTable(program: Command): Record<string, string[]> {
  const types = RESOURCE_TYPES.flatMap((t) => [t.name, ...t.aliases]);
  const table: Record<string, string[]> = {};
  const walk = (command: Command, path: string) => {
    const subs = command.commands.map((c) => c.name());
    const options = command.options.flatMap((o) => [o.long, o.short].filter((x): x is string => Boolean(x)));
    table[path] = [...subs, ...options];
    for (const sub of command.commands) walk(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  walk(program, '');
  for (const verb of ['get', 'delete']) table[verb] = [...types, ...(table[verb] ?? [])];
  return table;
}

function bashScript(program: Command): string {
  const cases = Object.entries(completionTable(program))
    .map(([path, words]) => `    "${path}") words="${words.join(' ')}" ;;`)
    .join('\n');
  return `# tarmac bash completion: eval "$(tarmac completion bash)"
_tarmac() {
  local cur path="" i w
  cur="\${COMP_WORDS[COMP_CWORD]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    case "$path" in "") path="$w" ;; *) path="$path $w" ;; esac
  done
  local words=""
  while :; do
    case "$path" in
${cases}
    *) words="" ;;
    esac
    [[ -n "$words" || -z "$path" || "$path" != *" "* ]] && break
    path="\${path% *}"
  done
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _tarmac tarmac
`;
}

export const registerCompletion: Register = (program, ctx) => {
  program
    .command('completion <shell>')
    .description(
      'Print a completion script: eval "$(tarmac completion bash)" (zsh: autoload bashcompinit first)',
    )
    .action((shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh') {
        throw new CliError('completion', `unsupported shell "${shell}"`, 'use bash or zsh', EXIT.usage);
      }
      const prefix = shell === 'zsh' ? 'autoload -U +X bashcompinit && bashcompinit\n' : '';
      ctx.stdout.write(prefix + bashScript(program));
    });
};
