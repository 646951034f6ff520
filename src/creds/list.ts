import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';

import { summarizeRisks } from '../access/risk.js';
import { rulesReview } from '../access/rules.js';
import { whoami } from '../access/whoami.js';
import { mapLimit } from '../base/concurrency.js';
import { readOptional } from '../base/files.js';
import { loadYamlIfValid } from '../base/yaml.js';
import { fleetCommand } from '../base/self.js';
import { ConfigError, type ErrorInfo, FleetError, toErrorInfo } from '../base/errors.js';
import type { HubSpec } from '../config/fleet-config.js';
import type { Connector } from '../kube/connector.js';
import { CLUSTER_PROFILE, SECRET } from '../kube/resources.js';
import { SERVICE_ACCOUNT_JWKS_PATH } from '../kube/paths.js';
import { type IssuerKeys, readIssuerKeys, verifySignature } from '../kube/service-account-keys.js';
import {
  CREDENTIAL_ID_EXTRA,
  bearerToken,
  certificateCredentialId,
  clientCertificatePem,
  describeCertificate,
  isoSeconds,
  jwtClaims,
  jwtCredentialId,
} from '../kubeconfig/credentials.js';
import { contextFromKubeconfigText } from '../kubeconfig/from-text.js';
import type { ResolvedContext } from '../kubeconfig/loading-rules.js';
import type { KubeconfigDoc } from '../kubeconfig/types.js';
import type { TrustPolicy } from '../kubeconfig/trust.js';
import { registerSecret } from '../kubeconfig/redact.js';
import {
  type ClusterEntry,
  EXEC_API_VERSION,
  EXEC_CLUSTER_CONFIG_EXTENSION,
  type UserEntry,
} from '../kubeconfig/types.js';
import { accessShapeProblem } from '../providers/hub/access-providers.js';
import { Hub } from '../providers/hub/client.js';
import { DIRECT_HUB_OBJECTS, type HubObjects } from '../providers/hub/watch-cache.js';
import { type Secret, secretText } from '../providers/hub/objects.js';
import type { ClusterRef } from '../providers/types.js';
import { fluxKey, fluxSecretRefs } from './flux-refs.js';
import { CODECS, FORMAT_QUERIES, type SecretFormat, detectFormat } from './codecs/index.js';
import { KUBECONFIG_EXTENSION, fileFacts } from './kubeconfig-out.js';
import { ADOPTED_FROM, ANNOTATIONS, MANAGED_BY_SELECTOR, factKey, isFleetManaged } from './labels.js';
import { type Phase, type RotationState, fileState, readState } from './rotation-state.js';
import { ACCESS_PROVIDER_NAME, PLUGIN_ARGS, wiTokenExec } from '../kubeconfig/wi-token-exec.js';

/**
 * Every credential fleet can see: the users of kubeconfig files, and the consumer Secrets of each known format on the
 * hubs. Each is described (method, identity, issued, expires) from the credential itself, offline: JWT claims
 * `iat`/`exp`, a certificate's NotBefore/NotAfter. Nothing secret is returned.
 */
export type CredentialMethod =
  | 'bound-token'
  | 'token'
  | 'legacy-token'
  | 'static-token'
  | 'client-cert'
  | 'exec'
  | 'workload-identity'
  | 'auth-provider'
  | 'basic'
  | 'none';

export interface CredentialItem {
  /** Where it is: `<file>` (context, user) or `secret <hub>:<namespace>/<name>`. */
  location: string;
  source:
    | { kind: 'kubeconfig'; path: string; context: string; user?: string }
    | { kind: 'secret'; hub: string; namespace: string; name: string; key?: string }
    /** A ClusterProfile access provider that runs fleet wi token: no Secret, the profile is the record. */
    | { kind: 'cluster-profile'; hub: string; namespace: string; name: string; accessProvider: string }
    /** An entry of the ClusterList an exec provider's program printed (docs/providers.md "exec"): the program holds it. */
    | { kind: 'exec'; provider: string; program: string; cluster: string };
  /** `cluster-list`: an exec provider program's output (its entry's kubeconfig, or its server and exec credential). */
  format: 'kubeconfig' | 'cluster-list' | SecretFormat | 'unknown';
  cluster?: string;
  server?: string;
  method: CredentialMethod;
  identity?: string;
  issued?: string;
  /** Seconds since `issued`, when known. */
  ageSeconds?: number;
  expires?: string;
  managedByFleet: boolean;
  /** fleet manages it because `creds adopt` took it over (the Secret's or file's adopted-from mark), not because it made it. */
  adopted?: boolean;
  /**
   * A rotation recorded on the Secret or file and not finished (rotation-state.ts): a run claimed it and failed, was
   * interrupted or is running now; the next `creds rotate` finishes or lifts it. `started` is when that run claimed it.
   */
  rotation?: { phase: Phase; started?: string };
  /**
   * What kube-apiserver records as user.extra["authentication.kubernetes.io/credential-id"] in the audit events of
   * requests made with it (`JTI=...`, `X509SHA256=...`): `creds list --credential-id` finds the holder from an event.
   */
  credentialId?: string;
  /** Why there is none (a legacy or static token, a credential a plugin mints per use): the audit log cannot name it. */
  noCredentialId?: string;
  /** For a Secret found through the objects that use it (Flux Kustomizations and HelmReleases): those objects. */
  referencedBy?: string[];
  /** Whether it expires within --expiring-within (or has expired). */
  expiring?: boolean;
  /**
   * Another credential fleet read claims the same credential-id with a different token (other bytes, so another
   * signature): the API server issued at most one token under a jti, so all but one are copies of its `jti` in a token
   * someone else signed (a forgery, or a token re-signed with another key). With --live: whether the server accepts
   * this one, and whether its signature verifies against the member's service-account issuer keys.
   */
  credentialIdShared?: SharedCredentialId;
  /** --live: who the server says it is, and the credential-id it recorded for the request (SelfSubjectReview). */
  live?: { ok: boolean; username?: string; credentialId?: string; error?: ErrorInfo };
  /**
   * A hub Secret fleet did not write: why `fleet creds adopt` is worth running on it (`legacy`, `static`, `no expiry`,
   * `client certificate (cannot be revoked)`, `not rotated by fleet`; with --live `risky grant (CODES)`).
   */
  adoptable?: string[];
  problems: string[];
}

export interface SharedCredentialId {
  /** The locations of the other holders whose token differs from this one. */
  otherHolders: string[];
  /** --live: the server accepted this token (its SelfSubjectReview answered), or refused it as unauthenticated. */
  accepted?: boolean;
  /**
   * --live: this token's signature against the keys the member publishes at /openid/v1/jwks, read with the operator's
   * own context for the item's server (a context of the kubeconfig files whose server is the same): `verifies` absent
   * when the keys could not be read (`reason` says why).
   */
  signature?: { verifies?: boolean; keys?: string; issuer?: string; reason?: string };
}

export interface CredentialList {
  kind: 'CredentialList';
  items: CredentialItem[];
  /** Hubs that could not be read (the listing is incomplete). */
  errors: Array<{ hub: string; error: ErrorInfo }>;
  /**
   * Said, not counted as a failure: the current context taken as the hub (nothing configured) refused to list Secrets;
   * a ClusterProfile whose status is of the wrong shape was not followed (its profile and field named).
   */
  warnings?: string[];
  expiringWithin?: string;
  /** --credential-id: the credential-ids asked for; items are only the credentials that have one of them. */
  credentialIds?: string[];
}

const iso = (seconds: unknown) => (typeof seconds === 'number' ? isoSeconds(new Date(seconds * 1000)) : undefined);

/** Method, identity and validity of one kubeconfig user, from the credential itself. */
type Described = Pick<
  CredentialItem,
  'method' | 'identity' | 'issued' | 'expires' | 'problems' | 'credentialId' | 'noCredentialId'
>;

/** Why the API server records no credential-id for requests made with a credential of this method. */
const NO_CREDENTIAL_ID: Partial<Record<CredentialMethod, string>> = {
  'legacy-token': 'a legacy ServiceAccount token: the API server records no credential-id for it',
  'static-token': 'a static token (not a JWT): the API server records no credential-id for it',
  exec: 'minted by the exec plugin at each use: its credential-id changes with every token',
  'workload-identity': 'minted at each use: its credential-id changes with every token',
  'auth-provider': 'given by the auth provider at each use',
  basic: 'basic authentication: no credential-id',
  none: 'no credential',
};

export async function describeUser(user: UserEntry): Promise<Described> {
  const d = await describeMethod(user);
  return d.credentialId || !NO_CREDENTIAL_ID[d.method] ? d : { ...d, noCredentialId: NO_CREDENTIAL_ID[d.method] };
}

async function describeMethod(user: UserEntry): Promise<Described> {
  const problems: string[] = [];
  // fleet wi token: a hub ServiceAccount token minted at each use; nothing stored, so no expiry and nothing to rotate.
  const wi = wiTokenExec(user.exec);
  if (wi)
    return {
      method: 'workload-identity',
      identity: wi.serviceAccount ? `hub ServiceAccount ${wi.serviceAccount}` : undefined,
      problems,
    };
  if (user.exec) return { method: 'exec', identity: user.exec.command, problems };
  if (user['auth-provider']) return { method: 'auth-provider', identity: user['auth-provider'].name, problems };
  if (user['client-certificate'] || user['client-certificate-data']) {
    try {
      const pem = await clientCertificatePem(user);
      registerSecret(user['client-key-data']);
      const c = describeCertificate(pem!);
      const groups = c.organizations.length ? ` (groups ${c.organizations.join(',')})` : '';
      return {
        method: 'client-cert',
        identity: `${c.commonName ?? c.subject}${groups}`,
        issued: c.notBefore,
        expires: c.notAfter,
        credentialId: certificateCredentialId(pem!),
        problems,
      };
    } catch (error) {
      problems.push(`client certificate: ${(error as Error).message}`);
      return { method: 'client-cert', problems };
    }
  }
  if (user.token || user.tokenFile) {
    let token: string | undefined;
    try {
      token = await bearerToken(user);
    } catch (error) {
      problems.push(`tokenFile ${user.tokenFile}: ${(error as Error).message}`);
    }
    const c = token ? jwtClaims(token) : undefined;
    if (!c) return { method: 'static-token', problems };
    const k8s = c['kubernetes.io'] as { secret?: unknown; pod?: unknown; node?: unknown } | undefined;
    const legacy = c.iss === 'kubernetes/serviceaccount';
    const method: CredentialMethod = legacy
      ? 'legacy-token'
      : k8s?.secret || k8s?.pod || k8s?.node
        ? 'bound-token'
        : 'token';
    const sub =
      typeof c.sub === 'string'
        ? c.sub
        : (c['kubernetes.io/serviceaccount/service-account.name'] as string | undefined);
    const identity =
      legacy && !c.sub ? `system:serviceaccount:${String(c['kubernetes.io/serviceaccount/namespace'])}:${sub}` : sub;
    // The legacy token authenticator records no credential-id, whatever the claims hold.
    const credentialId = legacy ? undefined : jwtCredentialId(c);
    return {
      method,
      identity,
      issued: iso(c.iat),
      expires: iso(c.exp),
      ...(credentialId
        ? { credentialId }
        : legacy
          ? {}
          : { noCredentialId: 'a JWT without a jti claim: the API server records no credential-id for it' }),
      problems,
    };
  }
  if (user.username || user.password) {
    problems.push(
      'basic authentication: kube-apiserver has not accepted it since 1.19 (requests with it are anonymous)',
    );
    return { method: 'basic', identity: user.username, problems };
  }
  return { method: 'none', problems };
}

/** The context each credential connects with, kept out of the item so it never reaches output. */
const contexts = new WeakMap<CredentialItem, ResolvedContext>();

function remember(item: CredentialItem, ctx: ResolvedContext | undefined): CredentialItem {
  if (ctx) contexts.set(item, ctx);
  return item;
}

function fleetMadeKubeconfig(text: string | undefined, context?: string): boolean {
  if (!text || !text.includes(KUBECONFIG_EXTENSION)) return false;
  // A file creds adopt --file took over records the one context fleet keeps; its other contexts stay the user's.
  const adopted = fileFacts(loadYamlIfValid(text) as KubeconfigDoc | undefined)?.context;
  return !adopted || context === undefined || adopted === context;
}

/** Whether fleet's record in a kubeconfig file says creds adopt --file took it over. */
function adoptedFile(text: string | undefined): boolean {
  return fileFacts(loadYamlIfValid(text ?? '') as KubeconfigDoc | undefined)?.[factKey(ADOPTED_FROM)] !== undefined;
}

function fileRotation(text: string | undefined): RotationState | undefined {
  const facts = fileFacts(loadYamlIfValid(text ?? '') as KubeconfigDoc | undefined);
  return facts ? fileState(facts) : undefined;
}

/** The item's `rotation`: names and a time only (rotation-state.ts records nothing secret). */
function unfinishedRotation(st: RotationState | undefined): Pick<CredentialItem, 'rotation'> {
  return st ? { rotation: { phase: st.phase, ...(st.started ? { started: st.started } : {}) } } : {};
}

/** Kubeconfig users reachable through the file-backed providers (one row per context). */
export async function kubeconfigCredentials(refs: ClusterRef[]): Promise<CredentialItem[]> {
  const items: CredentialItem[] = [];
  const seen = new Set<string>();
  for (const ref of refs) {
    if (ref.source.kind !== 'kubeconfig-file' && ref.source.kind !== 'kind') continue;
    let ctx: ResolvedContext;
    try {
      ctx = await ref.resolve();
    } catch (error) {
      items.push({
        location: ref.name,
        source: { kind: 'kubeconfig', path: ref.source.path ?? '', context: ref.source.context ?? '' },
        format: 'kubeconfig',
        cluster: ref.name,
        method: 'none',
        managedByFleet: false,
        problems: [toErrorInfo(error).message],
      });
      continue;
    }
    const key = `${ctx.userFile ?? ''}\u0000${ctx.userName ?? ''}\u0000${ctx.cluster.server}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const path = ref.source.path ?? ctx.contextFile ?? '';
    // Only to tell whether fleet wrote it: a file that cannot be read is simply not known to be fleet's.
    const text = await readOptional(ctx.userFile ?? path, 'a kubeconfig file').catch(() => undefined);
    items.push(
      remember(
        {
          location: `${path} (context ${ctx.contextName}${ctx.userName ? `, user ${ctx.userName}` : ''})`,
          source: { kind: 'kubeconfig', path, context: ctx.contextName, user: ctx.userName },
          format: 'kubeconfig',
          cluster: ref.name,
          server: ctx.cluster.server,
          ...(await describeUser(ctx.user)),
          managedByFleet: fleetMadeKubeconfig(text, ctx.contextName),
          ...(fleetMadeKubeconfig(text, ctx.contextName) && adoptedFile(text) ? { adopted: true } : {}),
          ...(fleetMadeKubeconfig(text, ctx.contextName) ? unfinishedRotation(fileRotation(text)) : {}),
        },
        ctx,
      ),
    );
  }
  return items;
}

/** Why an exec provider's credential is not fleet's to replace: the program prints it from a source fleet cannot write. */
export const EXEC_HELD = 'held by the program: replace it at its source (creds adopt writes only Secrets)';

/**
 * The credentials in the ClusterLists exec providers' programs printed (one row per cluster): a kubeconfig's token or
 * client certificate, described as a file's is, or an exec credential (its command; nothing is run, nothing is secret).
 * The output is data: a plugin or file the trust policy refuses is not run or read, and the row says so. None is
 * fleet's (`managedByFleet` false); a stored one is `adoptable` for the same reasons as a Secret's, and EXEC_HELD says
 * where it must be replaced.
 */
export async function execCredentials(refs: ClusterRef[], trust: TrustPolicy): Promise<CredentialItem[]> {
  const items: CredentialItem[] = [];
  for (const ref of refs) {
    if (ref.source.kind !== 'exec') continue;
    const program = ref.source.program ?? '';
    const cluster = ref.source.name ?? ref.name;
    const base = {
      location: `exec:${program} (provider ${ref.provider}, cluster ${cluster})`,
      source: { kind: 'exec' as const, provider: ref.provider, program, cluster },
      format: 'cluster-list' as const,
      cluster: ref.name,
      managedByFleet: false,
    };
    let ctx: ResolvedContext;
    try {
      ctx = await ref.resolve();
    } catch (error) {
      // A refused plugin is still an exec credential: its command is known (the ref's verdict), and nothing ran.
      const refused = ref.plugin && !ref.plugin.allowed ? ref.plugin : undefined;
      items.push({
        ...base,
        ...(ref.server ? { server: ref.server } : {}),
        method: refused ? 'exec' : 'none',
        ...(refused
          ? { identity: refused.command, noCredentialId: NO_CREDENTIAL_ID.exec }
          : { noCredentialId: NO_CREDENTIAL_ID.none }),
        problems: [toErrorInfo(error).message],
      });
      continue;
    }
    const item: CredentialItem = { ...base, server: ctx.cluster.server, ...(await describeHeld(ctx, trust)) };
    const reasons = adoptableReasons(item);
    if (reasons.length > 0) item.adoptable = [...reasons, EXEC_HELD];
    items.push(remember(item, ctx));
  }
  return items;
}

/**
 * A credential held in hub data, described without running or reading anything the trust policy refuses: such an item
 * says why in its problems, and --live does not connect with it (the connector refuses it too).
 */
async function describeHeld(ctx: ResolvedContext, trust: TrustPolicy): Promise<Described> {
  const refused = await trust.problem(ctx);
  if (!refused) return describeUser(ctx.user);
  // A refused plugin can still be described: describing an exec user reads its command, runs nothing.
  if (refused.kind === 'plugin') {
    const described = await describeUser(ctx.user);
    return { ...described, problems: [...described.problems, refused.message] };
  }
  // A refused file is never read, so the credential behind it cannot be described.
  const user = ctx.user;
  const method: CredentialMethod = user.exec
    ? 'exec'
    : user['client-certificate']
      ? 'client-cert'
      : user.tokenFile
        ? 'token'
        : 'none';
  return { method, identity: user.exec?.command, problems: [refused.message] };
}

async function describeSecret(
  s: Secret,
  hub: string,
  trust: TrustPolicy,
  referenced?: { format: SecretFormat; key: string },
): Promise<CredentialItem> {
  const { namespace = '', name } = s.metadata;
  const detected = referenced ??
    detectFormat(s) ?? { format: 'unknown' as const, reason: 'no consumer format label, type or annotation' };
  const annotations = s.metadata.annotations ?? {};
  const base = {
    location: `secret ${hub}:${namespace}/${name}`,
    format: detected.format,
    managedByFleet: isFleetManaged(s.metadata.labels),
    ...(isFleetManaged(s.metadata.labels) && annotations[ADOPTED_FROM] !== undefined ? { adopted: true } : {}),
    ...(isFleetManaged(s.metadata.labels) ? unfinishedRotation(readState(annotations)) : {}),
    cluster: annotations[ANNOTATIONS.cluster],
  };
  if (detected.format === 'unknown')
    return {
      ...base,
      source: { kind: 'secret', hub, namespace, name },
      method: 'none',
      problems: ['reason' in detected ? detected.reason : 'format not recognised'],
    };
  const codec = CODECS[detected.format];
  if (!codec.kubeconfigInKey) {
    // A format with a shape of its own (Argo CD's config JSON): its codec turns it into kubeconfig entries.
    const server = secretText(s, 'server');
    // fleet's name for a Secret fleet wrote (its `name` is a display name, docs/creds.md); Argo CD's name for one it did not.
    const cluster = base.cluster ?? secretText(s, 'name');
    const source = { kind: 'secret' as const, hub, namespace, name, key: codec.key };
    try {
      const held = codec.decode(s)!;
      const file = `secret ${namespace}/${name}`;
      const ctx = {
        contextName: name,
        clusterName: name,
        userName: name,
        cluster: held.cluster,
        user: held.user,
        contextFile: file,
        clusterFile: file,
        userFile: file,
        origin: { object: `Secret ${namespace}/${name} key ${codec.key}` },
      } as ResolvedContext;
      return remember({ ...base, cluster, server, source, ...(await describeHeld(ctx, trust)) }, ctx);
    } catch (error) {
      return {
        ...base,
        cluster,
        server,
        source,
        method: 'none',
        problems: [`${codec.key}: ${(error as Error).message}`],
      };
    }
  }
  const key = referenced?.key ?? codec.key;
  const text = secretText(s, key);
  const source = { kind: 'secret' as const, hub, namespace, name, key };
  if (!text) return { ...base, source, method: 'none', problems: [`no data key "${key}"`] };
  try {
    const ctx = contextFromKubeconfigText(text, `secret ${namespace}/${name} key ${key}`, {
      object: `Secret ${namespace}/${name} key ${key}`,
    });
    return remember(
      {
        ...base,
        source,
        server: ctx.cluster.server,
        ...(await describeHeld(ctx, trust)),
        managedByFleet: base.managedByFleet || fleetMadeKubeconfig(text),
      },
      ctx,
    );
  } catch (error) {
    return { ...base, source, method: 'none', problems: [toErrorInfo(error).message] };
  }
}

/** Consumer Secrets of every known format on one hub (each found once). */
export async function hubCredentials(
  spec: HubSpec,
  o: {
    connector: Connector;
    env?: NodeJS.ProcessEnv;
    warnings?: string[];
    namespaces?: string[];
    objects?: HubObjects;
  },
): Promise<CredentialItem[]> {
  const hub = new Hub(spec, { connector: o.connector, env: o.env }, 'hub');
  const name = await hub.name();
  const queries: Array<Record<string, string>> = [...FORMAT_QUERIES, { labelSelector: MANAGED_BY_SELECTOR }];
  // Each list cluster-wide, or once per namespace asked for (the exporter's --hub-namespace: a reader granted
  // Roles in those namespaces only, never every Secret of the hub).
  const scopes = o.namespaces?.length ? o.namespaces : [undefined];
  const objects = o.objects ?? DIRECT_HUB_OBJECTS;
  const found = new Map<string, Secret>();
  const lists = await Promise.all(
    queries.flatMap((q) =>
      scopes.map((namespace) => objects.list<Secret>(hub, SECRET, 'list Secrets', { ...q, namespace })),
    ),
  );
  for (const list of lists) for (const s of list) found.set(`${s.metadata.namespace}/${s.metadata.name}`, s);
  // fleet's anchors and legacy token Secrets carry the managed-by label but hold no consumer kubeconfig (no format);
  // a Secret whose annotation names a format fleet does not know is listed, with that problem.
  const consumers = [...found.values()].filter((s) => detectFormat(s) !== undefined);
  const items = await Promise.all(consumers.map((s) => describeSecret(s, name, o.connector.trust)));
  const profiles = (await Promise.all(scopes.map((namespace) => listProfiles(hub, objects, namespace)))).flat();
  o.warnings?.push(...profileShapeWarnings(profiles, name));
  // kubeconfig-secretreader Secrets have no label of their own: the ClusterProfiles that point at them name them.
  for (const ref of secretreaderRefs(profiles)) {
    if (!inScope(ref.namespace, o.namespaces)) continue;
    const id = `${ref.namespace}/${ref.name}`;
    if (found.has(id) && detectFormat(found.get(id)!) !== undefined) continue;
    const secret = await hub.getObject<Secret>(SECRET, ref.name, ref.namespace, `get Secret ${id}`);
    if (secret)
      items.push(
        await describeSecret(secret, name, o.connector.trust, { format: 'kubeconfig-secretreader', key: ref.key }),
      );
  }
  // Flux Secrets carry no label either: the Kustomizations and HelmReleases that deploy with them name them.
  for (const ref of (await Promise.all(scopes.map((namespace) => fluxSecretRefs(hub, namespace)))).flat()) {
    if (!inScope(ref.namespace, o.namespaces)) continue;
    const id = `${ref.namespace}/${ref.name}`;
    const known = items.find(
      (i) => i.source.kind === 'secret' && i.source.namespace === ref.namespace && i.source.name === ref.name,
    );
    if (known) {
      known.referencedBy = [...(known.referencedBy ?? []), ...ref.referencedBy];
      continue;
    }
    const secret = found.get(id) ?? (await hub.getObject<Secret>(SECRET, ref.name, ref.namespace, `get Secret ${id}`));
    if (!secret) continue;
    // The same object, not a copy: --live finds the credential's context by the item.
    const item = await describeSecret(secret, name, o.connector.trust, { format: 'flux', key: fluxKey(ref, secret) });
    item.referencedBy = ref.referencedBy;
    items.push(item);
  }
  items.push(...wiProfileItems(profiles, name, spec));
  for (const item of items) {
    const reasons = item.source.kind === 'secret' && item.format !== 'unknown' ? adoptableReasons(item) : [];
    if (reasons.length > 0) item.adoptable = reasons;
  }
  return items.sort((a, b) => a.location.localeCompare(b.location));
}

interface ProfileList {
  metadata: { namespace?: string; name?: string };
  status?: {
    accessProviders?: Array<{ cluster?: { extensions?: Array<{ name?: string; extension?: unknown }> } }>;
    credentialProviders?: Array<{ cluster?: { extensions?: Array<{ name?: string; extension?: unknown }> } }>;
  };
}

/**
 * One warning per ClusterProfile whose status is of the wrong shape (the cluster-inventory provider's rule): the
 * credentials its access providers name were not followed, and a listing or a --credential-id search that says
 * nothing of it would look complete. Names the profile and the field only: no value of the profile is repeated.
 */
export function profileShapeWarnings(
  profiles: Array<{ metadata: { namespace?: string; name?: string }; status?: unknown }>,
  hub: string,
): string[] {
  const out: string[] = [];
  for (const p of profiles) {
    const problem = accessShapeProblem(p.status);
    if (problem)
      out.push(
        `ClusterProfile ${hub}:${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}: ${problem}; the credentials its access providers name were not read`,
      );
  }
  return out;
}

/**
 * A ClusterProfile's access providers and (older API) credential providers. A status of the wrong shape (hub data
 * anyone who may write a ClusterProfile shapes) names no credential: the cluster-inventory provider's one shape rule
 * decides (that provider lists the profile as a not-ready row with the reason; creds list says it in a warning,
 * profileShapeWarnings).
 */
function profileProviders(p: ProfileList): NonNullable<NonNullable<ProfileList['status']>['accessProviders']> {
  if (accessShapeProblem(p.status)) return [];
  return [...(p.status?.accessProviders ?? []), ...(p.status?.credentialProviders ?? [])];
}

/** A Secret another object names outside the namespaces asked for is not read (nor asked for: no Role there). */
const inScope = (namespace: string, namespaces: string[] | undefined) =>
  !namespaces?.length || namespaces.includes(namespace);

async function listProfiles(hub: Hub, objects: HubObjects, namespace?: string): Promise<ProfileList[]> {
  try {
    return await objects.list<ProfileList>(hub, CLUSTER_PROFILE, 'list ClusterProfiles', { namespace });
  } catch (error) {
    // No ClusterProfile API on this hub (or no permission to read it): nothing to follow.
    if (
      error instanceof FleetError &&
      (error.kind === 'api-missing' || error.kind === 'forbidden' || error.kind === 'not-found')
    )
      return [];
    throw error;
  }
}

/**
 * ClusterProfile access providers whose exec extension is fleet wi token's config (`serviceAccount: NS/NAME`): the
 * cluster's credential is minted per use, so the item has no expiry and nothing to rotate. --live asks with the plugin
 * run by this fleet against this hub, which is what the consumer does with its own hub identity.
 */
function wiProfileItems(profiles: ProfileList[], hub: string, spec: HubSpec): CredentialItem[] {
  const items: CredentialItem[] = [];
  for (const p of profiles) {
    const namespace = p.metadata.namespace ?? '';
    const name = p.metadata.name ?? '';
    for (const a of profileProviders(p) as Array<{
      name?: string;
      cluster?: ClusterEntry;
    }>) {
      const ext = (a.cluster?.extensions ?? []).find((e) => e.name === EXEC_CLUSTER_CONFIG_EXTENSION)?.extension as
        { serviceAccount?: unknown } | undefined;
      if (typeof ext?.serviceAccount !== 'string' || !a.name || !a.cluster) continue;
      const location = `clusterprofile ${hub}:${namespace}/${name} (accessProvider ${a.name})`;
      const hubArgs = spec.kubeconfig?.length
        ? ['--hub-kubeconfig', spec.kubeconfig.join(':'), ...(spec.context ? ['--hub-context', spec.context] : [])]
        : [];
      const self = fleetCommand();
      const exec = {
        apiVersion: EXEC_API_VERSION,
        command: self.command,
        args: [...self.args, ...PLUGIN_ARGS, ...hubArgs],
        provideClusterInfo: true,
        interactiveMode: 'Never' as const,
      };
      items.push(
        remember(
          {
            location,
            source: { kind: 'cluster-profile', hub, namespace, name, accessProvider: a.name },
            format: 'cluster-inventory',
            cluster: `${namespace}/${name}`,
            server: a.cluster.server,
            method: 'workload-identity',
            identity: `hub ServiceAccount ${ext.serviceAccount}`,
            managedByFleet: a.name === ACCESS_PROVIDER_NAME,
            problems: [],
          },
          {
            contextName: `${namespace}/${name}`,
            clusterName: a.name,
            userName: a.name,
            cluster: a.cluster,
            user: { exec },
            contextFile: location,
            clusterFile: location,
            userFile: location,
            // fleet's own command; the profile's cluster entry is hub data.
            origin: { object: location, commandFromUser: true },
          },
        ),
      );
    }
  }
  return items;
}

/** Secrets that ClusterProfiles' access providers hand to kubeconfig-secretreader (`{name, key, namespace?}` in the exec extension). */
function secretreaderRefs(profiles: ProfileList[]): Array<{ namespace: string; name: string; key: string }> {
  const refs = new Map<string, { namespace: string; name: string; key: string }>();
  for (const p of profiles) {
    for (const a of profileProviders(p)) {
      for (const e of a.cluster?.extensions ?? []) {
        const c = e.extension as { name?: unknown; key?: unknown; namespace?: unknown } | undefined;
        if (e.name !== EXEC_CLUSTER_CONFIG_EXTENSION || typeof c?.name !== 'string' || typeof c.key !== 'string')
          continue;
        const namespace =
          typeof c.namespace === 'string' && c.namespace ? c.namespace : (p.metadata.namespace ?? 'default');
        refs.set(`${namespace}/${c.name}/${c.key}`, { namespace, name: c.name, key: c.key });
      }
    }
  }
  return [...refs.values()];
}

/** Why a consumer credential fleet did not make is worth adopting; empty for fleet's own and for plugins (nothing held). */
export function adoptableReasons(i: Pick<CredentialItem, 'method' | 'expires' | 'managedByFleet'>): string[] {
  if (i.managedByFleet) return [];
  const out: string[] = [];
  if (i.method === 'legacy-token') out.push('legacy');
  if (i.method === 'static-token') out.push('static');
  if (['legacy-token', 'static-token', 'token', 'bound-token'].includes(i.method) && !i.expires) out.push('no expiry');
  if (i.method === 'client-cert') out.push('client certificate (cannot be revoked)');
  if (out.length === 0 && ['token', 'bound-token'].includes(i.method)) out.push('not rotated by fleet');
  return out;
}

export function markExpiring(items: CredentialItem[], withinMs: number, now = Date.now()): number {
  let n = 0;
  for (const item of items) {
    item.expiring = item.expires !== undefined && Date.parse(item.expires) - now <= withinMs;
    if (item.expiring) n++;
  }
  return n;
}

/** --live: each credential asked who it is, with its own kubeconfig. */
export async function checkLive(
  items: CredentialItem[],
  o: { connector: Connector; concurrency: number },
): Promise<void> {
  await mapLimit(items, o.concurrency, async (item) => {
    const ctx = contexts.get(item);
    if (!ctx) {
      item.live = { ok: false, error: { kind: 'config', message: 'no usable credential to check' } };
      return;
    }
    try {
      const client = await o.connector.context(ctx, item.location);
      const user = (await whoami(client)).user;
      const recorded = user.extra[CREDENTIAL_ID_EXTRA]?.[0];
      item.live = { ok: true, username: user.username, ...(recorded ? { credentialId: recorded } : {}) };
      // The server's word against fleet's reading of the credential: they differ only if one of them is wrong.
      if (recorded && item.credentialId && recorded !== item.credentialId)
        item.problems.push(`the server recorded credential-id ${recorded}, not ${item.credentialId}`);
      // What an adoptable credential may do: the risk report of auth rules (cluster-wide rules show in any namespace).
      if (item.adoptable) {
        const risks = summarizeRisks((await rulesReview(client, 'default')).risks);
        if (risks.length > 0) item.adoptable.push(`risky grant (${risks.join(',')})`);
      }
    } catch (error) {
      item.live = { ok: false, error: toErrorInfo(error) };
    }
  });
}

/** The tokens fleet read, by item, as a digest: compared, never shown. */
const tokenDigests = new WeakMap<CredentialItem, string>();

/** The bearer token an item holds (a JWT whose id is JTI=...), read the way describing it did. */
async function heldToken(item: CredentialItem): Promise<string | undefined> {
  const user = contexts.get(item)?.user;
  if (!user || !item.credentialId?.startsWith('JTI=') || !(user.token || user.tokenFile)) return undefined;
  return bearerToken(user).catch(() => undefined);
}

/** One credential-id that two or more different tokens claim, with its holders. */
interface SharedGroup {
  credentialId: string;
  holders: CredentialItem[];
}

/**
 * Flags every credential-id (JTI=) that more than one distinct token claims. The same token in two places is one
 * credential copied (not flagged here); a different token with the same jti was not issued under that id by the API
 * server, which mints one token per jti. (An X509SHA256 id is the certificate's own hash: two different certificates
 * cannot share it.)
 */
async function markSharedCredentialIds(items: CredentialItem[]): Promise<SharedGroup[]> {
  const byId = new Map<string, CredentialItem[]>();
  for (const item of items) {
    const token = await heldToken(item);
    if (!token || !item.credentialId) continue;
    tokenDigests.set(item, createHash('sha256').update(token).digest('hex'));
    byId.set(item.credentialId, [...(byId.get(item.credentialId) ?? []), item]);
  }
  const groups: SharedGroup[] = [];
  for (const [credentialId, holders] of byId) {
    if (new Set(holders.map((h) => tokenDigests.get(h))).size < 2) continue;
    for (const h of holders) {
      const otherHolders = holders.filter((x) => tokenDigests.get(x) !== tokenDigests.get(h)).map((x) => x.location);
      h.credentialIdShared = { otherHolders };
      h.problems.push(
        `credential-id ${credentialId} is also claimed by a different token (${otherHolders.join(', ')}): the API server issued at most one of them under it`,
      );
    }
    groups.push({ credentialId, holders });
  }
  return groups;
}

/**
 * --live for a shared credential-id: which token the server accepts (the SelfSubjectReview each item's own --live
 * check made), and whether each signature verifies against the member's issuer keys. The keys are read with the
 * operator's own context for the item's server (from the kubeconfig files fleet read, server as written), never with
 * a credential from hub data: the server an item names only selects which of the operator's contexts is asked.
 */
async function checkShared(groups: SharedGroup[], found: CredentialItem[], connector: Connector): Promise<void> {
  const own = found
    .filter((i) => i.source.kind === 'kubeconfig')
    .map((i) => contexts.get(i))
    .filter((c): c is ResolvedContext => c !== undefined);
  const keysByServer = new Map<string, Promise<IssuerKeys & { keys?: string }>>();
  const keysFor = (server: string) => {
    let p = keysByServer.get(server);
    if (!p) {
      p = (async () => {
        const candidates = own.filter((c) => c.cluster.server === server);
        if (candidates.length === 0)
          return {
            error: `no context of your kubeconfig files has server ${server}: the member's issuer keys were not read`,
          };
        let last: IssuerKeys = {};
        for (const ctx of candidates) {
          const where = `${SERVICE_ACCOUNT_JWKS_PATH} of ${server} (context ${ctx.contextName})`;
          try {
            last = await readIssuerKeys(await connector.context(ctx, ctx.contextName));
          } catch (error) {
            last = { error: toErrorInfo(error).message };
          }
          if (last.jwks !== undefined) return { ...last, keys: where };
          last = { ...last, error: `${where}: ${last.error ?? 'not read'}` };
        }
        return last;
      })();
      keysByServer.set(server, p);
    }
    return p;
  };
  for (const g of groups) {
    for (const item of g.holders) {
      const shared = item.credentialIdShared!;
      if (item.live?.ok) shared.accepted = true;
      else if (item.live?.error?.kind === 'unauthorized') shared.accepted = false;
      const token = await heldToken(item);
      if (!token || !item.server) {
        shared.signature = { reason: 'no server or token to check' };
        continue;
      }
      const keys = await keysFor(item.server);
      if (keys.jwks === undefined) {
        shared.signature = { reason: keys.error ?? 'the keys were not read' };
        continue;
      }
      const verdict = await verifySignature(token, keys.jwks);
      shared.signature = {
        verifies: verdict.ok,
        keys: keys.keys,
        ...(keys.issuer ? { issuer: keys.issuer } : {}),
        ...(verdict.ok ? {} : { reason: verdict.reason }),
      };
      const accepted =
        shared.accepted === true ? 'the server accepts it' : shared.accepted === false ? 'the server refuses it' : '';
      const signed = verdict.ok
        ? `its signature verifies against the keys of ${keys.keys}`
        : `its signature does not verify against the keys of ${keys.keys} (${verdict.reason})`;
      item.problems.push(`credential-id ${g.credentialId}: ${[accepted, signed].filter((x) => x).join('; ')}`);
    }
  }
}

/** The one warning line of a shared credential-id: its holders, and with --live the one the server accepts. */
function sharedWarning(g: SharedGroup): string {
  const distinct = new Set(g.holders.map((h) => tokenDigests.get(h))).size;
  const accepted = g.holders.filter((h) => h.credentialIdShared?.accepted === true).map((h) => h.location);
  const checked = g.holders.some((h) => h.credentialIdShared?.accepted !== undefined);
  const verdict = !checked
    ? '--live says which one the server accepts'
    : accepted.length > 0
      ? `the server accepts ${accepted.join(', ')}`
      : 'the server accepts none of them';
  return `credential-id ${g.credentialId} is claimed by ${distinct} different tokens (${g.holders.map((h) => h.location).join(', ')}): the API server issues one token per jti, so the others copy its jti into a token someone else signed; ${verdict}`;
}

export interface ListOptions {
  /** The command's connector: hubs and --live clusters. */
  connector: Connector;
  env?: NodeJS.ProcessEnv;
  /** ms; mark (and count) credentials expiring within it. */
  expiringWithinMs?: number;
  live?: boolean;
  concurrency: number;
  /** Only the credentials with one of these credential-ids (as parseCredentialId wrote them). */
  credentialIds?: string[];
  /** Read hub objects in these namespaces only (default: every namespace). */
  hubNamespaces?: string[];
  /** How hub Secrets and ClusterProfiles are read: listed (default), or kept by watch across calls (the exporter). */
  hubObjects?: HubObjects;
}

/**
 * A hub to list; `guessed` when no hub was configured and the loading rules' current context stands in for one: a
 * context whose credential may not read Secrets there is then a warning (it may be no hub at all), any other failure
 * (nothing found, unreachable) still an error.
 */
export type ListHub = HubSpec & { guessed?: boolean };

/**
 * The hubs creds list reads, from the one hub rule's choices, with what a directory means sorted out before anything
 * is listed: `--kubeconfig DIR` is a directory of kubeconfig files (fleet reads each as a cluster file, as for
 * `clusters list`), and a directory has no current context to take a hub from. So a hub guessed from the loading
 * rules (no hub configured) is taken from the files of the list only; with none left no hub is read, which a warning
 * says. A hub the user named (--hub-context in a --kubeconfig list, a fleet configuration's hub) whose files are
 * directories only is refused here, in one line (exit 2), before any credential is listed.
 */
export async function listHubs(
  choices: Array<{ spec: HubSpec; origin: 'flags' | 'fleet-config' | 'loading-rules' }>,
): Promise<{ hubs: ListHub[]; warnings: string[] }> {
  const hubs: ListHub[] = [];
  const warnings: string[] = [];
  for (const { spec, origin } of choices) {
    const paths = spec.kubeconfig ?? [];
    const isDirectory = await Promise.all(
      paths.map((p) =>
        stat(p).then(
          (s) => s.isDirectory(),
          () => false,
        ),
      ),
    );
    const directories = paths.filter((_, i) => isDirectory[i]);
    if (directories.length === 0) {
      hubs.push(origin === 'loading-rules' ? { ...spec, guessed: true } : spec);
      continue;
    }
    const files = paths.filter((_, i) => !isDirectory[i]);
    const dirs = directories.join(', ');
    if (files.length > 0) {
      hubs.push({ ...spec, kubeconfig: files, ...(origin === 'loading-rules' ? { guessed: true } : {}) });
      continue;
    }
    if (origin === 'loading-rules') {
      warnings.push(
        `no hub read: ${dirs} ${directories.length === 1 ? 'is a directory' : 'are directories'} of kubeconfig files, with no current context to take a hub from; pass --hub-kubeconfig FILE to list a hub's Secrets too`,
      );
      continue;
    }
    const which =
      origin === 'flags'
        ? `--hub-context ${spec.context ?? ''}`.trim()
        : `hub ${spec.context ?? paths.join(':')} (the fleet configuration's)`;
    throw new ConfigError(
      `${which}: ${dirs} ${directories.length === 1 ? 'is a directory' : 'are directories'}, not a kubeconfig file to find the hub in; name the hub's kubeconfig with --hub-kubeconfig FILE`,
    );
  }
  return { hubs, warnings };
}

/** A hub as creds list names it in its errors (and the exporter in fleet_source_up): its context, files, or neither. */
export function hubLabel(spec: HubSpec): string {
  return spec.context ?? spec.kubeconfig?.join(':') ?? 'current context';
}

export async function listCredentials(refs: ClusterRef[], hubs: ListHub[], o: ListOptions): Promise<CredentialList> {
  const found = [...(await kubeconfigCredentials(refs)), ...(await execCredentials(refs, o.connector.trust))];
  const errors: CredentialList['errors'] = [];
  const warnings: string[] = [];
  for (const { guessed, ...spec } of hubs) {
    try {
      found.push(
        ...(await hubCredentials(spec, { ...o, warnings, namespaces: o.hubNamespaces, objects: o.hubObjects })),
      );
    } catch (error) {
      const info = toErrorInfo(error);
      const hub = hubLabel(spec);
      if (guessed && (info.kind === 'forbidden' || info.kind === 'unauthorized'))
        warnings.push(
          `hub ${hub} (the current context, no hub configured): its Secrets were not listed: ${info.message}`,
        );
      else errors.push({ hub, error: info });
    }
  }
  // --credential-id: the holders of the credentials an audit event names, across every file and hub read above.
  const wanted = o.credentialIds ? new Set(o.credentialIds) : undefined;
  const items = wanted ? found.filter((i) => i.credentialId !== undefined && wanted.has(i.credentialId)) : found;
  const now = Date.now();
  for (const item of items)
    if (item.issued) item.ageSeconds = Math.max(0, Math.round((now - Date.parse(item.issued)) / 1000));
  if (o.expiringWithinMs !== undefined) markExpiring(items, o.expiringWithinMs);
  const shared = await markSharedCredentialIds(items);
  if (o.live) await checkLive(items, o);
  if (o.live && shared.length > 0) await checkShared(shared, found, o.connector);
  warnings.push(...shared.map(sharedWarning));
  return {
    kind: 'CredentialList',
    items,
    errors,
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(o.credentialIds ? { credentialIds: o.credentialIds } : {}),
  };
}
