import { realpathSync } from 'node:fs';
import { basename } from 'node:path';

/**
 * Whether a program is an interpreter: a program that runs whatever code or program its arguments (or its input) name,
 * so that allowing it allows everything (issue 46). Such a program is never added to a kuberc allowlist by fleet, and
 * runs for hub data only with arguments the operator allowed word for word (docs/security.md, "Interpreters").
 *
 * The rule is by what the file is called, twice: the name as written and the name of the file it resolves to (links
 * followed), so `/bin/sh` (a link to dash or busybox), `/usr/bin/python3` (to python3.12) and an alternatives link
 * are judged by the program that actually runs. A version suffix (`python3.12`, `perl5.36`, `ruby3.1`, `lua5.4`) and a
 * Windows `.exe`/`.com` are part of the same name. A wrapper script under its own name is not an interpreter: it is
 * the program the operator wrote, and what to allow instead.
 *
 * The families (one phrase each, for messages):
 * - shells: a command line in an argument is a program;
 * - launchers: their arguments name another program to run (env, sudo, nohup, xargs, timeout, ...);
 * - language runtimes: an argument is code or a script to run (-c, -e, -m, a path).
 */
const FAMILIES: ReadonlyArray<[RegExp, string]> = [
  [
    /^(sh|bash|rbash|dash|ash|zsh|ksh|ksh93|mksh|pdksh|oksh|lksh|yash|posh|fish|csh|tcsh|elvish|nu|xonsh|busybox|toybox|cmd|command\.com)$/,
    'a shell',
  ],
  [
    /^(env|sudo|doas|su|runuser|setpriv|nohup|nice|ionice|chrt|taskset|setsid|stdbuf|timeout|chroot|unshare|nsenter|flock|xargs|time|watch|script|strace|ltrace|gdb|valgrind|find|exec|command|builtin|eval|start-stop-daemon|systemd-run|run-parts|parallel|expect|ssh|make|gmake|awk|gawk|mawk|nawk|busctl|wine|wine64|rundll32|mshta|wscript|cscript|conhost)$/,
    'a launcher of other programs',
  ],
  [
    /^(python|python[0-9][0-9.]*|pypy|pypy[0-9][0-9.]*|ipython[0-9.]*|uv|uvx|pipx|node|nodejs|deno|bun|npx|npm|pnpm|yarn|tsx|ts-node|perl|perl[0-9][0-9.]*|ruby|ruby[0-9][0-9.]*|jruby|irb|php|php[0-9][0-9.]*|lua|lua[0-9][0-9.]*|luajit|tclsh|tclsh[0-9][0-9.]*|wish|wish[0-9][0-9.]*|pwsh|pwsh-preview|powershell|powershell_ise|osascript|java|jshell|groovy|scala|kotlin|kotlinc|jbang|rscript|r|julia|runghc|runhaskell|ghci|guile|racket|sbcl|clisp|ocaml|erl|escript|elixir|iex|dotnet|mono|csi|swift|go|gomacro|dart|crystal|nim|vim|nvim|emacs|sed|gsed|m4|sqlite3|openssl)$/,
    'a language runtime',
  ],
];

/** The name a program is judged by: its file name, without a Windows executable suffix, in lower case. */
function judgedName(path: string): string {
  return basename(path.replace(/\\/g, '/'))
    .replace(/\.(exe|com|bat|cmd)$/i, '')
    .toLowerCase();
}

function familyOf(name: string): string | undefined {
  return FAMILIES.find(([re]) => re.test(name))?.[1];
}

/**
 * What kind of interpreter a program is (`a shell`, `a launcher of other programs`, `a language runtime`), or undefined
 * when it is none. `written` is the command as the kubeconfig writes it; `program` the absolute path it resolves to, if
 * known (its link target is judged too). Nothing is run or opened; a link that cannot be followed judges the link.
 */
export function interpreterKind(written: string, program?: string): string | undefined {
  const names = new Set([judgedName(written)]);
  if (program) {
    names.add(judgedName(program));
    try {
      names.add(judgedName(realpathSync(program)));
    } catch {
      // A missing file is judged by its names: it cannot run anyway.
    }
  }
  for (const n of names) {
    const kind = familyOf(n);
    if (kind) return kind;
  }
  return undefined;
}

/**
 * The script an interpreter's arguments run, when they name one by absolute path (`bash /opt/x/token.sh`, `sh -c
 * '/opt/x/token --flag'`, `env /opt/x/token`): what to allow instead of the interpreter. Undefined when no argument
 * starts with an absolute path.
 */
export function wrapperIn(args: readonly string[]): string | undefined {
  for (const a of args) {
    const first = a.trim().split(/\s+/)[0] ?? '';
    if (first.startsWith('/') && !first.startsWith('//')) return first.replace(/[;&|'"]+$/, '');
  }
  return undefined;
}
