/**
 * Whether fleet may talk to a person: prompts and interactive exec plugins need stdin and stdout to be terminals, CI
 * unset and human (not machine) output. @inquirer/prompts waits forever on an open pipe, so this gate is not optional.
 */
export function canInteract(options: { machineOutput: boolean; env?: NodeJS.ProcessEnv }): boolean {
  const env = options.env ?? process.env;
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
  return !options.machineOutput && !ci && Boolean(process.stdin.isTTY) && Boolean(process.stdout.isTTY);
}
