import type {
  AuthenticationV1TokenRequest,
  V1CertificateSigningRequest,
  V1Secret,
  V1TokenRequestSpec,
} from '@kubernetes/client-node';
import { FleetError } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import { describeCertificate } from '../kubeconfig/credentials.js';
import { registerSecret } from '../kubeconfig/redact.js';
import type { UserEntry } from '../kubeconfig/types.js';
import { makeClientKeyAndCsr } from './csr.js';
import type { ApplyLog } from '../kube/apply-log.js';
import type { KubeObject } from '../kube/objects.js';
import { CERTIFICATE_SIGNING_REQUEST, SECRET, TOKEN_REQUEST } from '../kube/resources.js';
import { createObject, getObject, updateObject } from '../kube/typed.js';
import { type Identity, fleetLabels, safeName } from './rbac.js';
import type { Wire } from '../kube/objects.js';

export const METHODS = ['token', 'legacy-token', 'client-cert'] as const;
export type Method = (typeof METHODS)[number];

export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';

export interface Issued {
  user: UserEntry;
  /** As granted by the server (TokenRequest status, certificate NotAfter); absent for a legacy token. */
  expires?: string;
  anchor?: { namespace: string; name: string; uid: string };
  /** The CSR that produced a certificate. */
  csr?: string;
}

export const anchorName = (sa: string, destinationKey: string) =>
  safeName(`${sa}-fleet-anchor-${destinationKey}`).slice(0, 253);
export const legacySecretName = (sa: string, destinationKey: string) =>
  safeName(`${sa}-fleet-token-${destinationKey}`).slice(0, 253);

/** The anchor Secret a bound token hangs on: deleting it revokes every token bound to it. */
export function anchorObject(
  id: Identity & { kind: 'ServiceAccount' },
  name: string,
  annotations: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: id.namespace, labels: fleetLabels(id), annotations },
    type: 'Opaque',
  } satisfies Wire<V1Secret>;
}

export function legacyTokenObject(
  id: Identity & { kind: 'ServiceAccount' },
  name: string,
  annotations: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: id.namespace,
      labels: fleetLabels(id),
      annotations: { ...annotations, 'kubernetes.io/service-account.name': id.name },
    },
    type: 'kubernetes.io/service-account-token',
  } satisfies Wire<V1Secret>;
}

/** TokenRequest bound to the anchor Secret; the expiry reported is the one the server granted, not the one asked for. */
export async function issueBoundToken(
  client: KubeClient,
  id: Identity & { kind: 'ServiceAccount' },
  anchor: { name: string; uid: string },
  seconds: number,
): Promise<Issued> {
  const body = {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: {
      expirationSeconds: seconds,
      boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: anchor.name, uid: anchor.uid },
    },
    // audiences (required in the model) is left out: the server then uses its own API audiences, which a kubeconfig needs.
  } satisfies Omit<Wire<AuthenticationV1TokenRequest>, 'spec'> & { spec: Omit<Wire<V1TokenRequestSpec>, 'audiences'> };
  const { status } = await createObject<Wire<AuthenticationV1TokenRequest>>(client, TOKEN_REQUEST.resource, body, {
    namespace: id.namespace,
    name: id.name,
    subresource: TOKEN_REQUEST.subresource,
    what: `create token for ServiceAccount ${id.namespace}/${id.name}`,
  });
  if (!status?.token)
    throw new FleetError(
      'server',
      `create token for ServiceAccount ${id.namespace}/${id.name}: the answer has no token`,
    );
  registerSecret(status.token);
  return {
    user: { token: status.token },
    expires: status.expirationTimestamp,
    anchor: { namespace: id.namespace, ...anchor },
  };
}

async function poll<T>(what: string, timeoutMs: number, step: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await step();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new FleetError('timeout', `${what}: not done within ${Math.round(timeoutMs / 1000)}s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Waits for kube-controller-manager to fill a legacy token Secret. */
export async function awaitLegacyToken(
  client: KubeClient,
  namespace: string,
  name: string,
  timeoutMs = 30_000,
): Promise<Issued> {
  const token = await poll(`token Secret ${namespace}/${name}`, timeoutMs, async () => {
    const s = await getObject<Wire<V1Secret>>(client, SECRET, name, { namespace });
    return s?.data?.token ? Buffer.from(s.data.token, 'base64').toString('utf8') : undefined;
  });
  registerSecret(token);
  return { user: { token } };
}

/**
 * A client certificate for a user: the key is made here and never leaves this process (only the CSR goes to the
 * server); fleet approves the CSR itself (it must be allowed to), then waits for the signer.
 */
export async function issueClientCert(
  client: KubeClient,
  id: Identity & { kind: 'User' },
  seconds: number,
  log: ApplyLog,
  annotations: Record<string, string>,
  timeoutMs = 30_000,
): Promise<Issued> {
  const { keyPem, csrPem } = await makeClientKeyAndCsr(id.name, id.groups);
  registerSecret(keyPem);
  const name = safeName(`fleet-${id.name}-${Date.now().toString(36)}`);
  const csr = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name, labels: fleetLabels(id), annotations },
    spec: {
      request: Buffer.from(csrPem).toString('base64'),
      signerName: CLIENT_SIGNER,
      expirationSeconds: seconds,
      usages: ['client auth'],
    },
  } satisfies Wire<V1CertificateSigningRequest>;
  const obj = await createObject<Wire<V1CertificateSigningRequest> & KubeObject>(
    client,
    CERTIFICATE_SIGNING_REQUEST,
    csr,
    { what: `create CertificateSigningRequest ${name}` },
  );
  log.recordCreated(client, CERTIFICATE_SIGNING_REQUEST, name, 'cluster');
  obj.status = {
    conditions: [
      {
        type: 'Approved',
        status: 'True',
        reason: 'FleetCredsGenerate',
        message: `approved by fleet creds generate for ${id.name}`,
      },
    ],
  };
  await updateObject(client, obj, { subresource: 'approval', what: `approve CertificateSigningRequest ${name}` });
  const certB64 = await poll(`certificate for CertificateSigningRequest ${name}`, timeoutMs, async () => {
    const c = await getObject<Wire<V1CertificateSigningRequest>>(client, CERTIFICATE_SIGNING_REQUEST, name);
    const failed = c?.status?.conditions?.find((x) => x.type === 'Failed' || x.type === 'Denied');
    if (failed)
      throw new FleetError('server', `CertificateSigningRequest ${name}: ${failed.type}: ${failed.message ?? ''}`);
    return c?.status?.certificate || undefined;
  });
  const certPem = Buffer.from(certB64, 'base64').toString('utf8');
  const info = describeCertificate(certPem);
  return {
    user: { 'client-certificate-data': certB64, 'client-key-data': Buffer.from(keyPem).toString('base64') },
    expires: info.notAfter,
    csr: name,
  };
}
