/** CI is set (to anything but empty, `false` or `0`): no prompts, no live progress line. */
export function inCI(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
}

/**
 * Whether fleet may talk to a person: prompts and interactive exec plugins need stdin and stdout to be terminals, CI
 * unset and human (not machine) output. @inquirer/prompts waits forever on an open pipe, so this gate is not optional.
 */
export function canInteract(options: { machineOutput: boolean; env?: NodeJS.ProcessEnv }): boolean {
  const env = options.env ?? process.env;
  return !options.machineOutput && !inCI(env) && Boolean(process.stdin.isTTY) && Boolean(process.stdout.isTTY);
}
