/**
 * client-go retries a response that carries Retry-After when the status is 429 or a 5xx (the server asked to be asked
 * again), waiting the number of seconds it names. Anything else, or a Retry-After that is not a number of seconds, is final.
 */
export function retryDelayMs(status: number, retryAfter: string | string[] | undefined): number | undefined {
  if (status !== 429 && !(status >= 500 && status <= 599)) return undefined;
  const value = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value) * 1000;
}
