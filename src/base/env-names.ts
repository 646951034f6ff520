/**
 * The names of variables hub data may never set for a plugin, whatever an allowlist says (issue 38's floor under issue
 * 46's allowlist): in base/ so that the fleet configuration refuses an allowlist entry naming one, and the trust policy
 * refuses data setting one, by the same rule.
 */
/*
 * A name must be a POSIX-portable identifier (so `BASH_ENV=$(cmd)`, `BASH_FUNC_date%%` and anything a shell could read as more
 * than a name are out by their shape), and must not be one of the variables below, which choose what a program or a
 * shell runs rather than hand it a value. Matched without regard to case (no loader or shell needs another spelling).
 */
export const DATA_ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RUNS_WHAT: ReadonlyArray<[RegExp, string]> = [
  [
    /^(LD_|DYLD_|_RLD)\w*$|^(LIBPATH|SHLIB_PATH|GLIBC_TUNABLES|GCONV_PATH|LOCPATH|NLSPATH|MALLOC_\w*)$/,
    'the dynamic loader or C library',
  ],
  [/^(PATH|SHELL|EDITOR|VISUAL|PAGER|BROWSER)$/, 'which program a name runs'],
  [
    /^(BASH_ENV|ENV|BASH_FUNC_\w*|SHELLOPTS|BASHOPTS|PS[0-9]|PROMPT_COMMAND|IFS|CDPATH|GLOBIGNORE|EXECIGNORE|BASH_XTRACEFD|BASH_LOADABLES_PATH|BASH_COMPAT|POSIXLY_CORRECT|INPUTRC|ZDOTDIR|FPATH)$/,
    "a shell's start-up, functions, options or prompt expansion",
  ],
  [
    /^(NODE_OPTIONS|NODE_PATH|NODE_REPL_EXTERNAL_MODULE|PYTHON\w*|PERL5\w*|PERLLIB|PERL_\w*|RUBY\w*|GEM_\w*|BUNDLE_\w*|LUA_\w*|TCLLIBPATH|PHPRC|PHP_INI_SCAN_DIR|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|CLASSPATH|OPENSSL_CONF|OPENSSL_ENGINES|OPENSSL_MODULES|GIT_\w*|GODEBUG|CLOUDSDK_PYTHON\w*)$/,
    "an interpreter's or library's start-up code",
  ],
  [/^KUBERNETES_EXEC_INFO$/, 'what client-go itself hands the plugin'],
];

/**
 * Why hub data may never set this variable for a plugin (one phrase), or undefined when an allowlist entry may allow
 * it (nothing is allowed by default: TrustPolicy requires the entry). The one floor for exec.env of a hub Secret, a
 * ClusterProfile's additional-envs, an Argo CD execProviderConfig.env and an exec provider's output, and for the
 * `env` of a fleet.yaml allowlist entry.
 */
export function dataEnvProblem(name: string): string | undefined {
  if (!DATA_ENV_NAME.test(name)) return 'is not a portable variable name, [A-Za-z_][A-Za-z0-9_]*';
  const upper = name.toUpperCase();
  const hit = RUNS_WHAT.find(([re]) => re.test(upper));
  // The line says only that: which start-up hook it is stays in the list above (and in docs/security.md).
  return hit ? 'chooses what runs' : undefined;
}
