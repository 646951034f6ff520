/**
 * How a service tells the command what long work it is doing, without printing: the port the CLI's live line (and an
 * interrupt's acknowledgement) reads (src/cli/progress.ts renders it; whether anything is drawn is decided there, once).
 * A service is handed one (or none) and only calls it; every method is cheap and may be called often.
 */
export interface ProgressPort {
  /** How many of the run's items are done (`failed` of them failed): `[12/40] credentials, 1 failed`. */
  count(progress: Count): void;
  /** What one item (`key`, e.g. `hub/ns/name`) is doing now (`finding the cluster to mint on`); undefined when it is done. */
  doing(key: string, text: string | undefined): void;
  /** A wait that can take seconds begins; the function returned ends it (call it however the wait ends). */
  wait(wait: Wait): () => void;
}

export interface Count {
  done: number;
  total: number;
  failed: number;
}

export interface Wait {
  /** The live line while it lasts: `hub/ns/name: waiting for the API server to refuse the old token (up to 30s)`. */
  text: string;
  /** When it ends at the latest (Date.now() ms). */
  deadline: number;
  /** When it usually ends (the API server's 10 s token cache and the last poll), if that is sooner than the deadline. */
  usually?: number;
  /** What an interrupt lets the run finish first: `the rotation of hub/ns/name (waiting for the old token to be refused)`. */
  finishing: string;
  /** What a second interrupt, ending the run at once, leaves: `hub/ns/name holding the new credential, ...`. */
  leaves: string;
}

/** The port that reports to nobody (a service given none uses this). */
export const NO_PROGRESS: ProgressPort = {
  count: () => undefined,
  doing: () => undefined,
  wait: () => () => undefined,
};
