/**
 * Warnings found below the command layer (a server reached over plain http), said once per run on stderr. One place,
 * so the rendering layer can take them over later without every module learning about output.
 */
const said = new Set<string>()
let sink: (line: string) => void = (line) => process.stderr.write(line + '\n')

export function warnOnce(message: string): void {
  if (said.has(message)) return
  said.add(message)
  sink(`warning: ${message}`)
}

/** Redirects warnings (the CLI scrubs them; tests collect them). */
export function setWarningSink(fn: (line: string) => void): void {
  sink = fn
}
