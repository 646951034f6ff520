/**
 * Whether a stream may receive cursor control (the `\r` + erase-line of a progress line): a terminal that is not
 * `TERM=dumb`. A dumb terminal (Emacs shell buffers, some CI consoles) prints escape codes as garbage.
 */
export function cursorControlAllowed(stream: {isTTY?: boolean}, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && env.TERM !== 'dumb'
}
