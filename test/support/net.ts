import { createServer } from 'node:net';

/** A loopback port with nothing listening on it (bound, then released), for "unreachable" cases. */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}
