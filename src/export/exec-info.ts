import { createHash } from 'node:crypto';

import { ConfigError } from '../base/errors.js';
import { EXEC_API_VERSIONS } from '../kubeconfig/types.js';
import { jsonProblem, parseJson } from '../base/json.js';

const WHERE = 'KUBERNETES_EXEC_INFO';

/**
 * The cluster kubectl is about to send the credential to, as client-go describes it to the plugin (provideClusterInfo:
 * true): the server as the kubeconfig spells it, and what decides which certificate it accepts there.
 */
export interface ExecCluster {
  server: string;
  /** certificate-authority-data: base64 of the CA bytes kubectl verifies the server with (its file's too); absent: none. */
  caData?: string;
  /** SHA-256 of caData, for the cache's key (the CA itself is not kept). */
  caHash?: string;
  /** insecure-skip-tls-verify: kubectl will not verify the server's certificate at all. */
  insecure: boolean;
  /** tls-server-name: the name the certificate is verified for instead of the server's host. */
  tlsServerName?: string;
  /**
   * Where the destination was read when the client did not pass it (exec-view.ts: a context of its kubeconfig files),
   * for messages; absent: KUBERNETES_EXEC_INFO, kubectl's own word. Not part of the cache's identity.
   */
  from?: string;
}

/** What client-go tells the plugin: the version to answer in and the cluster it connects to. */
export interface ExecRequest {
  apiVersion: string;
  cluster: ExecCluster;
}

/**
 * KUBERNETES_EXEC_INFO read strictly: a credential is handed out only for a cluster kubectl names, so a missing
 * variable (run by hand, or an entry with provideClusterInfo: false), a missing spec.cluster, a server that is not a
 * non-empty string, or a field of the wrong type is refused with one line (exit 2), before any provider is asked.
 * Keys are matched exactly (JSON.parse's; fleet-credential reads the same way).
 */
export function readExecRequest(raw: string | undefined): ExecRequest {
  if (raw === undefined || raw.trim() === '') {
    throw new ConfigError(
      `${WHERE} is not set: kubectl passes the cluster it connects to only to exec entries with provideClusterInfo: true (fleet kubeconfig export writes it); no credential is given without it`,
    );
  }
  let value: unknown;
  try {
    value = parseJson(raw);
  } catch (error) {
    throw new ConfigError(`${WHERE}: ${jsonProblem(error, 'not valid JSON')}`);
  }
  const object = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!object(value) || value.kind !== 'ExecCredential') throw new ConfigError(`${WHERE}: not an ExecCredential`);
  if (typeof value.apiVersion !== 'string' || !EXEC_API_VERSIONS.includes(value.apiVersion)) {
    throw new ConfigError(
      `${WHERE}: apiVersion ${JSON.stringify(value.apiVersion ?? '')} is not one fleet answers (${EXEC_API_VERSIONS.join(', ')})`,
    );
  }
  const cluster = object(value.spec) ? value.spec.cluster : undefined;
  if (!object(cluster)) {
    throw new ConfigError(
      `${WHERE}: no spec.cluster (the exec entry has provideClusterInfo: false?); fleet gives a credential only for the server it is sent to; run fleet kubeconfig export again`,
    );
  }
  if (typeof cluster.server !== 'string' || cluster.server === '')
    throw new ConfigError(`${WHERE}: spec.cluster.server is not a non-empty string`);
  const ca = cluster['certificate-authority-data'];
  if (ca !== undefined && ca !== null && typeof ca !== 'string')
    throw new ConfigError(`${WHERE}: spec.cluster.certificate-authority-data is not a string`);
  const insecure = cluster['insecure-skip-tls-verify'];
  if (insecure !== undefined && insecure !== null && typeof insecure !== 'boolean')
    throw new ConfigError(`${WHERE}: spec.cluster.insecure-skip-tls-verify is not a boolean`);
  const name = cluster['tls-server-name'];
  if (name !== undefined && name !== null && typeof name !== 'string')
    throw new ConfigError(`${WHERE}: spec.cluster.tls-server-name is not a string`);
  return {
    apiVersion: value.apiVersion,
    cluster: {
      server: cluster.server,
      ...(typeof ca === 'string' && ca !== ''
        ? { caData: ca, caHash: createHash('sha256').update(ca).digest('hex') }
        : {}),
      insecure: insecure === true,
      ...(typeof name === 'string' && name !== '' ? { tlsServerName: name } : {}),
    },
  };
}

/** The ExecCredential on stdout: the credential and, always, when client-go must ask again. */
export function execCredentialJson(
  apiVersion: string,
  credential: { token?: string; clientCertificateData?: string; clientKeyData?: string },
  expirationTimestamp: string,
): string {
  const status: Record<string, string> = {};
  if (credential.token) status.token = credential.token;
  if (credential.clientCertificateData && credential.clientKeyData) {
    status.clientCertificateData = credential.clientCertificateData;
    status.clientKeyData = credential.clientKeyData;
  }
  status.expirationTimestamp = expirationTimestamp;
  return `${JSON.stringify({ apiVersion, kind: 'ExecCredential', status })}\n`;
}
