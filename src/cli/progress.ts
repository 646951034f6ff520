import type {Progress} from '../fleet/runner.js'

/**
 * The progress line of a run over several clusters, on stderr, only for a person at a terminal: `[3/12] clusters,
 * 1 failed`, rewritten in place and erased when the last cluster is done so it never mixes with the output.
 */
export function progressLine(stream: NodeJS.WriteStream = process.stderr): ((p: Progress) => void) | undefined {
  if (!stream.isTTY) return undefined
  return ({done, total, failed}) => {
    if (total <= 1) return
    stream.write(done >= total ? '\r\u001B[2K' : `\r\u001B[2K[${done}/${total}] clusters${failed > 0 ? `, ${failed} failed` : ''}`)
  }
}
