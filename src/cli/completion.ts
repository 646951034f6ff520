import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Shell completion beyond what @oclif/plugin-autocomplete writes (src/commands/autocomplete/create.ts runs the plugin,
 * then this): its bash script offered a topic once per command under it (`fleet cl<TAB>` gave `clusters` three times)
 * and neither shell completed flag values. Here bash gets a script of fleet's own, and zsh the plugin's script with the
 * cluster and context flags completed. Values come from `fleet autocomplete values clusters|contexts`, given the
 * --kubeconfig, --context, --fleet-config and --provider already on the line, so they are the clusters that command
 * would see.
 */
export interface CompletionCommand {
  id: string;
  flags: Record<
    string,
    { name: string; char?: string; type: 'boolean' | 'option'; options?: readonly string[]; hidden?: boolean }
  >;
}

/** Flags whose value is a cluster name fleet resolves, and flags whose value is a kubeconfig context. */
export const CLUSTER_FLAGS = ['cluster', 'hub', 'target'];
export const CONTEXT_FLAGS = ['context', 'hub-context'];
/** The flags that choose which clusters exist, passed on when values are listed. */
const SCOPE_FLAGS = ['--kubeconfig', '--context', '--fleet-config', '--provider'];

const word = (s: string) => s.replace(/[^\w:.,/+=@-]/g, '');

export function bashCompletion(bin: string, commands: CompletionCommand[]): string {
  const fn = `_${word(bin).replace(/-/g, '_')}_autocomplete`;
  const visible = commands.map((c) => ({ ...c, flags: Object.values(c.flags).filter((f) => !f.hidden) }));
  const spell = (f: { name: string; char?: string }) => [`--${f.name}`, ...(f.char ? [`-${f.char}`] : [])];
  const cases = (pick: (c: (typeof visible)[number]) => string[]) =>
    visible.map((c) => `    ${word(c.id)}) echo "${pick(c).map(word).join(' ')}" ;;`).join('\n');
  const optionCases = visible
    .flatMap((c) =>
      c.flags
        .filter((f) => f.options?.length)
        .flatMap((f) =>
          spell(f).map((s) => `    ${word(c.id)}\\ ${word(s)}) echo "${f.options!.map(word).join(' ')}" ;;`),
        ),
    )
    .join('\n');
  const kind = (names: string[]) =>
    visible.flatMap((c) =>
      c.flags.filter((f) => names.includes(f.name)).flatMap((f) => spell(f).map((s) => `${word(c.id)}\\ ${word(s)}`)),
    );
  const uniq = (xs: string[]) => [...new Set(xs)];
  return `#!/usr/bin/env bash
# fleet's bash completion (written by \`${bin} autocomplete\`; see src/cli/completion.ts).

__${fn}_ids="${visible.map((c) => word(c.id)).join(' ')}"

# The flags of a command, and those of them that take a value.
__${fn}_flags() {
  case "$1" in
${cases((c) => c.flags.flatMap(spell))}
  esac
}
__${fn}_value_flags() {
  case "$1" in
${cases((c) => c.flags.filter((f) => f.type === 'option').flatMap(spell))}
  esac
}
__${fn}_options() {
  case "$1" in
${optionCases || '    __none__) ;;'}
  esac
}

# Cluster names or contexts, as the command line so far would see them.
__${fn}_values() {
  local -a scope=()
  local i
  # Only flags whose value is already typed (the word being completed is not passed on).
  for ((i = 1; i + 1 < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
      ${SCOPE_FLAGS.join('|')}) scope+=("\${COMP_WORDS[i]}" "\${COMP_WORDS[i+1]}") ;;
    esac
  done
  "\${COMP_WORDS[0]}" autocomplete values "$1" "\${scope[@]}" 2>/dev/null
}

${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" id="" next="" i w
  ((COMP_CWORD > 1)) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  COMPREPLY=()
  # The command so far: the words that are not flags or flag values, joined with ":" while they name a topic or command.
  local skip=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    if ((skip)); then skip=0; continue; fi
    if [[ "$w" == -* ]]; then
      [[ " $(__${fn}_value_flags "$id") " == *" \${w%%=*} "* && "$w" != *=* ]] && skip=1
      continue
    fi
    next="\${id:+$id:}$w"
    if [[ " $__${fn}_ids " == *" $next "* || " $__${fn}_ids " == *" $next:"* ]]; then id="$next"; fi
  done

  # A flag's value.
  if [[ "$prev" == -* && " $(__${fn}_value_flags "$id") " == *" $prev "* ]]; then
    case "$id $prev" in
      ${uniq(kind(CLUSTER_FLAGS)).join('|') || '__none__'}) mapfile -t COMPREPLY < <(compgen -W "$(__${fn}_values clusters)" -- "$cur") ;;
      ${uniq(kind(CONTEXT_FLAGS)).join('|') || '__none__'}) mapfile -t COMPREPLY < <(compgen -W "$(__${fn}_values contexts)" -- "$cur") ;;
      *)
        local options
        options="$(__${fn}_options "$id $prev")"
        if [[ -n "$options" ]]; then mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
        else compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur"); fi
        ;;
    esac
    return 0
  fi

  if [[ "$cur" == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(__${fn}_flags "$id")" -- "$cur")
    return 0
  fi

  # The next word of a command: each topic or command once.
  local -a words=()
  local c rest
  for c in $__${fn}_ids; do
    if [[ -z "$id" ]]; then rest="$c"
    elif [[ "$c" == "$id:"* ]]; then rest="\${c#"$id:"}"
    else continue; fi
    words+=("\${rest%%:*}")
  done
  mapfile -t COMPREPLY < <(compgen -W "$(printf '%s\\n' "\${words[@]}" | sort -u)" -- "$cur")
}

complete -F ${fn} ${word(bin)}
`;
}

/** The plugin's zsh script with cluster and context flags completed from fleet instead of as file names. */
export function zshCompletion(bin: string, pluginScript: string): string {
  const b = word(bin).replace(/-/g, '_');
  let script = pluginScript;
  // Not `_<bin>_clusters`: the plugin names its function for the clusters topic so.
  for (const [names, fn] of [
    [CLUSTER_FLAGS, `__${b}_complete_clusters`],
    [CONTEXT_FLAGS, `__${b}_complete_contexts`],
  ] as const) {
    for (const name of names) {
      // One flag spec per line: `--context"[...]:file:_files" \\` or `"*"{-c,--cluster}"[...]:file:_files" \\`.
      const spec = new RegExp(`^(.*(?:--${name}\\}?|,--${name}\\})"\\[.*\\]):file:_files"`, 'gm');
      script = script.replace(spec, `$1:${name}:${fn}"`);
    }
  }
  const values = (what: string) => `__${b}_complete_${what}() {
  local -a scope values
  local i
  # Only flags whose value is already typed (the word being completed is not passed on).
  for (( i = 1; i + 1 < CURRENT; i++ )); do
    case \${words[i]} in
      ${SCOPE_FLAGS.join('|')}) scope+=(\${words[i]} "\${(Q)words[i+1]}") ;;
    esac
  done
  values=(\${(f)"$(${word(bin)} autocomplete values ${what} \${scope[@]} 2>/dev/null)"})
  compadd -a values
}
`;
  // The functions go before the script's last lines (its own entry point), so they exist when it first runs.
  return script.replace(/^#compdef .*\n/, (first) => `${first}\n${values('clusters')}\n${values('contexts')}\n`);
}

/** What `fleet autocomplete` leaves in `<cacheDir>/autocomplete` once the plugin has written its files: fleet's bash, zsh with values. */
export async function rewriteCompletionFiles(
  autocompleteDir: string,
  bin: string,
  all: Array<{ id: string; hidden?: boolean; flags: object }>,
): Promise<void> {
  const commands: CompletionCommand[] = all
    .filter((c) => !c.hidden)
    .map((c) => ({ id: c.id, flags: c.flags as CompletionCommand['flags'] }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const functions = join(autocompleteDir, 'functions');
  await writeFile(join(functions, 'bash', `${bin}.bash`), bashCompletion(bin, commands));
  const zshFile = join(functions, 'zsh', `_${bin}`);
  await writeFile(zshFile, zshCompletion(bin, await readFile(zshFile, 'utf8')));
}
