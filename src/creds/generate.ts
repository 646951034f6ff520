import { createHash } from 'node:crypto';

import type { V1ClusterRole, V1Namespace, V1ServiceAccount } from '@kubernetes/client-node';

import { accessReview } from '../access/access-review.js';
import type { RiskFinding } from '../access/risk.js';
import { type Check, worstStatus } from '../base/checks.js';
import type { Cancellation } from '../base/cancel.js';
import { ConfigError, EXIT_USAGE, FleetError, Interrupted, UsageError } from '../base/errors.js';
import { checkWritableFile } from '../base/files.js';
import { MIN_TOKEN_SECONDS } from '../base/limits.js';
import { type TestPause, pauseAt, testPauseHook } from '../base/test-pause.js';
import type { HubSpec } from '../config/fleet-config.js';
import type { KubeClient } from '../kube/client.js';
import type { Connector } from '../kube/connector.js';
import { type AppliedObject, ApplyLog } from '../kube/apply-log.js';
import type { KubeObject, Wire } from '../kube/objects.js';
import {
  CERTIFICATE_SIGNING_REQUEST,
  CLUSTER_PROFILE,
  CLUSTER_ROLE,
  NAMESPACE,
  SECRET,
  SERVICE_ACCOUNT,
} from '../kube/resources.js';
import { deleteObject, describeObject, getObject, updateObject } from '../kube/typed.js';
import { writeFileAtomic } from '../kubeconfig/atomic-write.js';
import { contextFromKubeconfigText } from '../kubeconfig/from-text.js';
import type { ClusterEntry } from '../kubeconfig/types.js';
import type { ClusterRef } from '../providers/types.js';
import {
  type SecretDestination,
  type SecretFormat,
  checkDestination,
  destinationSecret,
  secretName,
} from './codecs/index.js';
import { secretreaderAccessProvider } from './codecs/kubeconfig-secretreader.js';
import { buildKubeconfig, kubeconfigSha256, portableCluster } from './kubeconfig-out.js';
import { type OutFileReplaced, checkOutFile, replacedWarnings } from './out-file.js';
import { ANNOTATIONS, isFleetManaged } from './labels.js';
import { type ClusterIdentityFacts, identityFacts, identityRecord } from './cluster-identity.js';
import { type Lifetime, lifetimeOf, shortenedWarning } from './lifetime.js';
import {
  type Issued,
  type Method,
  anchorName,
  anchorObject,
  awaitLegacyToken,
  issueBoundToken,
  issueClientCert,
  legacySecretName,
  legacyTokenObject,
} from './methods.js';
import { findPreset } from './presets.js';
import {
  type Access,
  type Identity,
  describeAccess,
  describeAnnotations,
  describeScope,
  fleetLabels,
  rbacObjects,
  safeName,
  username,
} from './rbac.js';
import { assessGrant, refuseRisky } from './risk-gate.js';
import { loadRulesFile } from './rules-file.js';
import { verifyCredential } from './verify.js';
import { kernelPath } from '../base/paths.js';

export type AccessRequest = { preset: string } | { rulesFile: string } | { clusterRole: string };

export type Destination =
  { kind: 'file'; path: string } | { kind: 'stdout' } | ({ kind: 'secret' } & SecretDestination);

export interface GenerateRequest {
  ref: ClusterRef;
  identity: Identity;
  access: AccessRequest;
  /** Empty: cluster-wide. */
  namespaces: string[];
  method: Method;
  durationSeconds: number;
  destination: Destination;
  /** The hub that receives a destination Secret (the fleet configuration's hub, or the loading rules' current context). */
  hub?: HubSpec;
  allowRisky?: boolean;
  createNamespace?: boolean;
  force?: boolean;
  dryRun?: boolean;
  /** kubeconfig-secretreader: the ClusterProfile (namespace/name) whose status.accessProviders gets the entry. */
  updateProfile?: { namespace: string; name: string };
  /** The name people see: Argo CD's cluster `name`, the written kubeconfig's context (default: see displayName()). */
  displayName?: string;
}

/**
 * The name a consumer shows people for the cluster (the Argo CD UI's cluster name): --display-name, else the context's
 * name for a kubeconfig-file cluster (what the person typed and sees in kubectl, not fleet's `<file>+<context>`), else
 * the cluster's fleet name (a hub Secret's or Cluster's name).
 */
export function displayName(r: Pick<GenerateRequest, 'ref' | 'displayName'>): string {
  if (r.displayName) return r.displayName;
  return r.ref.source.kind === 'kubeconfig-file' && r.ref.source.context ? r.ref.source.context : r.ref.name;
}

export interface GenerateEnv {
  /** The command's connector: the hub, the target and the new credential. */
  connector: Connector;
  env?: NodeJS.ProcessEnv;
  /** The command's interrupt (SIGINT/SIGTERM), honoured between steps: what was made is undone, then Interrupted. */
  cancel?: Cancellation;
  /** Test hooks (the pause at a step), read by the command from its environment once; none in production. */
  hooks?: GenerateHooks;
}

/** The stable JSON shape of `creds generate` (documented in docs/creds.md). */
export interface GeneratedCredential {
  kind: 'GeneratedCredential';
  dryRun: boolean;
  cluster: string;
  server?: string;
  identity: { kind: 'ServiceAccount' | 'User'; username: string; namespace?: string; name: string; groups?: string[] };
  method: Method;
  access: string;
  scope: { clusterWide: boolean; namespaces: string[] };
  /** When the credential stops working, as the server granted it; absent for a legacy token, which never expires. */
  expires?: string;
  /** The lifetime asked for (--duration) and the one the server issued (it may cut it); absent for a legacy token. */
  lifetime?: Lifetime;
  /** SHA-256 of the kubeconfig bytes (never the kubeconfig). */
  fingerprint?: string;
  destination:
    | { kind: 'file'; path: string }
    | { kind: 'stdout' }
    | { kind: 'secret'; hub: string; namespace: string; name: string; format: SecretFormat };
  anchor?: { namespace: string; name: string; uid?: string };
  objects: Array<AppliedObject<'cluster' | 'hub'>>;
  verification: Check[];
  /** Risky grants that were allowed (per-namespace Secrets, or anything with --allow-risky). */
  risks: RiskFinding[];
  /** kubeconfig-secretreader: the ClusterProfile status.accessProviders entry pointing at the Secret. */
  accessProvider?: { name: string; cluster: Record<string, unknown> };
  warnings: string[];
  /** --dry-run: the objects that would be applied (destination Secret without its data). */
  plan?: KubeObject[];
}

export interface GenerateOutcome {
  result: GeneratedCredential;
  /** Only for `--out -`: the kubeconfig to print (the one way fleet ever prints a secret). */
  kubeconfig?: string;
}

const b64sha = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 8);

function destinationKey(d: Destination): string {
  if (d.kind === 'file') return b64sha(`file:${kernelPath(d.path)}`);
  if (d.kind === 'stdout') return b64sha('stdout');
  return b64sha(`secret:${d.namespace}/${secretName(d)}:${d.format}`);
}

export async function resolveAccess(req: AccessRequest, target: KubeClient | undefined): Promise<Access> {
  if ('preset' in req) {
    const p = findPreset(req.preset);
    return { kind: 'preset', name: p.name, rules: p.rules };
  }
  if ('rulesFile' in req) return { kind: 'rules', file: req.rulesFile, rules: await loadRulesFile(req.rulesFile) };
  const role = target ? await getObject<Wire<V1ClusterRole>>(target, CLUSTER_ROLE, req.clusterRole) : undefined;
  if (!role) throw new ConfigError(`--cluster-role: ClusterRole "${req.clusterRole}" not found on the cluster`);
  return { kind: 'cluster-role', name: req.clusterRole, rules: role.rules ?? [] };
}

/** Permission to do what generate will do, asked of the cluster before anything is made (exit 2, naming it). */
async function preflight(client: KubeClient, r: GenerateRequest, cluster: string): Promise<void> {
  const need: Array<{
    verb: string;
    group: string;
    resource: string;
    namespace: string;
    subresource?: string;
    name?: string;
  }> = [];
  const ns = r.namespaces;
  if (ns.length === 0) {
    if (!('clusterRole' in r.access))
      need.push({ verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterroles', namespace: '' });
    need.push({ verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings', namespace: '' });
  }
  for (const n of ns) {
    if (!('clusterRole' in r.access))
      need.push({ verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'roles', namespace: n });
    need.push({ verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'rolebindings', namespace: n });
  }
  if (r.identity.kind === 'ServiceAccount') {
    need.push({ verb: 'create', group: '', resource: 'secrets', namespace: r.identity.namespace });
    if (r.method === 'token')
      need.push({
        verb: 'create',
        group: '',
        resource: 'serviceaccounts',
        subresource: 'token',
        namespace: r.identity.namespace,
      });
  } else {
    need.push({ verb: 'create', group: 'certificates.k8s.io', resource: 'certificatesigningrequests', namespace: '' });
    need.push({
      verb: 'update',
      group: 'certificates.k8s.io',
      resource: 'certificatesigningrequests',
      subresource: 'approval',
      namespace: '',
    });
    need.push({
      verb: 'approve',
      group: 'certificates.k8s.io',
      resource: 'signers',
      name: 'kubernetes.io/kube-apiserver-client',
      namespace: '',
    });
  }
  for (const a of need) {
    const d = await accessReview(client, { resource: a });
    if (!d.allowed) {
      const what = `${a.verb} ${a.group ? `${a.resource}.${a.group}` : a.resource}${a.subresource ? `/${a.subresource}` : ''}${a.name ? ` ${a.name}` : ''}${a.namespace ? ` in namespace ${a.namespace}` : ''}`;
      throw new FleetError(
        'forbidden',
        `cluster "${cluster}": your credential may not ${what}, which creds generate needs`,
        { exitCode: EXIT_USAGE },
      );
    }
  }
}

/** The directory of --out must exist and be writable: found out before the cluster is touched, not at the last step. */
async function checkOutDir(path: string): Promise<void> {
  await checkWritableFile(path, `--out ${path}`, 'a kubeconfig file');
}

/** What generate learned from the hub and the cluster before making anything (reads only). */
export interface GenerateFacts {
  target: KubeClient;
  /** The hub that receives a destination Secret (reachable, the Secret fleet's or --force, its namespace there). */
  hub?: KubeClient;
  access: Access;
  /** Namespaces to create (only with --create-namespace: without it, missing ones are refused before this). */
  missingNamespaces: string[];
  serviceAccountExists: boolean;
  /** The cluster as the new kubeconfig presents it (server, CA, TLS name). */
  cluster: ClusterEntry;
  /** The hub namespace to create with the Secret (--create-namespace). */
  hubNamespace?: KubeObject;
  /** What identifies the cluster wherever the credential is rotated from (cluster-identity.ts). */
  clusterFacts: ClusterIdentityFacts;
}

/** Everything generate will do, decided before it does any of it; `--dry-run` prints `objects` and `destinationPreview`. */
export interface GeneratePlan {
  request: GenerateRequest;
  access: Access;
  /** Applied on the cluster, in this order (namespaces, ServiceAccount, RBAC, the anchor or legacy token Secret). */
  objects: KubeObject[];
  /** The anchor (token) or legacy token Secret among `objects`. */
  credentialObject?: KubeObject;
  annotations: Record<string, string>;
  cluster: ClusterEntry;
  /** The destination Secret without its data (--secret). */
  destinationPreview?: KubeObject;
  /** The result as far as it is known before anything is made (with `plan` set for --dry-run). */
  result: GeneratedCredential;
}

/**
 * The steps of a run, in the order they are done; after each one an interrupt is honoured (what was made is undone).
 * `checked`: everything read, nothing made yet. Delivery (the file, the hub Secret) is the last step: once it is done, the
 * run is done.
 */
export const GENERATE_STEPS = [
  'checked',
  'namespace',
  'service-account',
  'role',
  'binding',
  'anchor',
  'mint',
  'verify',
] as const;
export type GenerateStep = (typeof GENERATE_STEPS)[number];

function stepOf(kind: string): GenerateStep {
  if (kind === 'Namespace') return 'namespace';
  if (kind === 'ServiceAccount') return 'service-account';
  if (kind === 'Role' || kind === 'ClusterRole') return 'role';
  if (kind === 'RoleBinding' || kind === 'ClusterRoleBinding') return 'binding';
  return 'anchor';
}

/**
 * Test hook (base/test-pause.ts): `FLEET_TEST_PAUSE_AT=<step>` stops a run after that step until it is interrupted. The
 * command reads the variables once (generateHooks) and passes them in GenerateEnv.hooks.
 */
export interface GenerateHooks {
  pauseAt?: TestPause;
}

export function generateHooks(env: Record<string, string | undefined>): GenerateHooks {
  const pause = testPauseHook(env);
  return pause ? { pauseAt: pause } : {};
}

export async function generateCredential(r: GenerateRequest, env: GenerateEnv): Promise<GenerateOutcome> {
  try {
    const valid = await validate(r);
    const facts = await readFacts(valid, env);
    const p = plan(valid, facts);
    if (r.dryRun) return { result: p.result };
    return await execute(p, facts, env);
  } catch (error) {
    // Interrupted before anything was made (reading, a plugin killed by the interrupt): said as an interrupt, not as
    // whatever the interrupted read reported.
    if (env.cancel?.interrupted && !(error instanceof Interrupted))
      throw env.cancel.error('before anything was made: nothing to undo');
    throw error;
  }
}

/** A request whose flags, preset or rules file and destination file were checked without contacting anything. */
export interface ValidRequest {
  request: GenerateRequest;
  /** --out --force over a file fleet wrote for another credential: what the write replaces (said in the warnings). */
  replaces?: OutFileReplaced;
}

/** The offline checks: flags that contradict each other, the preset or rules file and its risk, the --out file and directory. */
export async function validate(r: GenerateRequest): Promise<ValidRequest> {
  if (r.method !== 'legacy-token' && r.durationSeconds < MIN_TOKEN_SECONDS) {
    throw new UsageError(
      `--duration: at least 10m (the API server refuses shorter ${r.method === 'token' ? 'tokens' : 'certificates'})`,
    );
  }
  if (r.method === 'client-cert' && r.identity.kind !== 'User')
    throw new UsageError('--method client-cert needs --user NAME (and optionally --group)');
  if (r.method !== 'client-cert' && r.identity.kind !== 'ServiceAccount')
    throw new UsageError(`--method ${r.method} needs --service-account NAMESPACE/NAME`);
  if (r.destination.kind === 'secret') checkDestination(r.destination);
  if (r.updateProfile && !(r.destination.kind === 'secret' && r.destination.format === 'kubeconfig-secretreader')) {
    throw new UsageError('--update-profile needs --secret with --format kubeconfig-secretreader');
  }
  // Offline checks first: a bad preset or rules file is reported without contacting anything.
  if (!('clusterRole' in r.access)) {
    const access = await resolveAccess(r.access, undefined);
    if (!r.allowRisky)
      refuseRisky(
        assessGrant(access.rules, r.namespaces.length === 0),
        `to grant ${describeAccess(access)} ${describeScope(r.namespaces)}`,
      );
  }
  if (r.destination.kind === 'file') {
    await checkOutDir(r.destination.path);
    const replaces = await checkOutFile(
      { ref: r.ref, identity: r.identity, method: r.method, path: r.destination.path },
      r.force,
    );
    if (replaces) return { request: r, replaces };
  }
  return { request: r };
}

/** The hub first (reachable, the destination Secret fleet's or --force), then the cluster: reads only, nothing made. */
async function readFacts(v: ValidRequest, env: GenerateEnv): Promise<GenerateFacts> {
  const r = v.request;
  const cluster = r.ref.name;
  // The hub and the destination Secret are checked before anything is made.
  let hub: KubeClient | undefined;
  let hubNamespace: KubeObject | undefined;
  if (r.destination.kind === 'secret') {
    hub = await env.connector.hub(r.hub, env.env);
    const existing = await getObject(hub, SECRET, secretName(r.destination), { namespace: r.destination.namespace });
    if (existing && !isFleetManaged(existing.metadata.labels) && !r.force) {
      throw new ConfigError(
        `hub ${hub.context.contextName}: Secret ${r.destination.namespace}/${secretName(r.destination)} exists and is not managed by fleet; pass --force to take it over`,
      );
    }
    if (!(await getObject(hub, NAMESPACE, r.destination.namespace))) {
      if (!r.createNamespace)
        throw new ConfigError(
          `hub ${hub.context.contextName}: namespace ${r.destination.namespace} does not exist; pass --create-namespace to create it`,
        );
      hubNamespace = {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: r.destination.namespace, labels: fleetLabels(r.identity) },
      } satisfies Wire<V1Namespace>;
    }
  }

  const ctx = await r.ref.resolve();
  const target = await env.connector.context(ctx, cluster);
  const access = await resolveAccess(r.access, target);
  const verdict = assessGrant(access.rules, r.namespaces.length === 0);
  if (!r.allowRisky) refuseRisky(verdict, `to grant ${describeAccess(access)} ${describeScope(r.namespaces)}`);

  // Namespaces must exist: a typo must not create a namespace, and a Role in a missing namespace would fail halfway.
  const id = r.identity;
  const wantNamespaces = [...new Set([...(id.kind === 'ServiceAccount' ? [id.namespace] : []), ...r.namespaces])];
  await preflight(target, r, cluster);
  const missing: string[] = [];
  for (const n of wantNamespaces) {
    // A credential that may create RBAC in a namespace but not read Namespaces is possible: then the apply itself tells.
    const found = await getObject(target, NAMESPACE, n).catch((error) => {
      if (error instanceof FleetError && error.kind === 'forbidden') return true;
      throw error;
    });
    if (!found) missing.push(n);
  }
  if (missing.length > 0 && !r.createNamespace) {
    throw new ConfigError(
      `cluster "${cluster}": namespace${missing.length > 1 ? 's' : ''} ${missing.join(', ')} do${missing.length > 1 ? '' : 'es'} not exist; pass --create-namespace to create ${missing.length > 1 ? 'them' : 'it'}`,
    );
  }
  const serviceAccountExists =
    id.kind === 'ServiceAccount' &&
    Boolean(await getObject(target, SERVICE_ACCOUNT, id.name, { namespace: id.namespace }));
  const clusterFacts = await identityFacts(ctx, target, r.ref);
  return {
    target,
    hub,
    access,
    missingNamespaces: missing,
    serviceAccountExists,
    cluster: await portableCluster(ctx),
    hubNamespace,
    clusterFacts,
  };
}

/** Pure: from the checked request and what was read, the objects to apply, the destination and the result so far. */
export function plan(v: ValidRequest, f: GenerateFacts): GeneratePlan {
  const r = v.request;
  const cluster = r.ref.name;
  const id = r.identity;
  const access = f.access;
  const verdict = assessGrant(access.rules, r.namespaces.length === 0);
  const cl = f.cluster;
  const dkey = destinationKey(r.destination);
  const annotations = describeAnnotations(id, access, r.namespaces, r.method);
  const objects: KubeObject[] = [];
  for (const n of f.missingNamespaces)
    objects.push({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: n, labels: fleetLabels(id) },
    } satisfies Wire<V1Namespace>);
  if (id.kind === 'ServiceAccount' && !f.serviceAccountExists) {
    objects.push({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: id.name, namespace: id.namespace, labels: fleetLabels(id), annotations },
    } satisfies Wire<V1ServiceAccount>);
  }
  objects.push(...rbacObjects(id, access, r.namespaces, r.method));
  let credentialObject: KubeObject | undefined;
  if (id.kind === 'ServiceAccount') {
    credentialObject =
      r.method === 'token'
        ? anchorObject(id, anchorName(id.name, dkey), annotations)
        : legacyTokenObject(id, legacySecretName(id.name, dkey), annotations);
    objects.push(credentialObject);
  }

  const result: GeneratedCredential = {
    kind: 'GeneratedCredential',
    dryRun: Boolean(r.dryRun),
    cluster,
    server: cl.server,
    identity:
      id.kind === 'ServiceAccount'
        ? { kind: id.kind, username: username(id), namespace: id.namespace, name: id.name }
        : { kind: id.kind, username: id.name, name: id.name, groups: id.groups },
    method: r.method,
    access: describeAccess(access),
    scope: { clusterWide: r.namespaces.length === 0, namespaces: r.namespaces },
    // Set once issued; declared here so that they come in this order in JSON and YAML.
    expires: undefined,
    lifetime: r.method === 'legacy-token' ? undefined : { requestedSeconds: r.durationSeconds, shortened: false },
    fingerprint: undefined,
    destination:
      r.destination.kind === 'secret'
        ? {
            kind: 'secret',
            hub: f.hub!.context.contextName,
            namespace: r.destination.namespace,
            name: secretName(r.destination),
            format: r.destination.format,
          }
        : r.destination.kind === 'file'
          ? { kind: 'file', path: kernelPath(r.destination.path) }
          : { kind: 'stdout' },
    anchor: undefined,
    objects: [],
    verification: [],
    risks: verdict.findings,
    warnings: [],
  };
  if (r.method === 'legacy-token')
    result.warnings.push(
      'a legacy ServiceAccount token never expires: it works until its Secret or the ServiceAccount is deleted',
    );
  if (r.destination.kind === 'file')
    result.warnings.push(...replacedWarnings(v.replaces, kernelPath(r.destination.path), r.dryRun));
  for (const finding of r.allowRisky ? verdict.blocking : [])
    result.warnings.push(`granted despite risk rule "${finding.code}" (--allow-risky): ${finding.message}`);
  if (r.destination.kind === 'secret' && r.destination.format === 'kubeconfig-secretreader') {
    result.accessProvider = secretreaderAccessProvider(r.destination, cl);
  }

  let destinationPreview: KubeObject | undefined;
  if (r.destination.kind === 'secret') {
    destinationPreview = destinationSecret(r.destination, {
      kubeconfig: '',
      cluster: cl,
      user: {},
      clusterName: cluster,
      displayName: displayName(r),
      annotations,
    });
    destinationPreview.data = Object.fromEntries(
      Object.keys(destinationPreview.data as object).map((k) => [k, '(credential, made when run without --dry-run)']),
    );
  }
  if (r.dryRun) {
    result.plan = [
      ...objects,
      ...(f.hubNamespace ? [f.hubNamespace] : []),
      ...(destinationPreview ? [destinationPreview] : []),
    ];
    if (id.kind === 'ServiceAccount' && credentialObject)
      result.anchor =
        r.method === 'token' ? { namespace: id.namespace, name: credentialObject.metadata.name } : undefined;
  }
  return { request: r, access, objects, credentialObject, annotations, cluster: cl, destinationPreview, result };
}

/**
 * Makes what the plan says: applies the objects (ApplyLog), issues the credential, proves it, delivers it. On a failure,
 * or an interrupt between two steps, what this run created is deleted and what it changed is put back (the undo runs to
 * its end whatever signal arrives; only a second one ends the process, see src/cli/interrupt.ts).
 */
export async function execute(p: GeneratePlan, f: GenerateFacts, env: GenerateEnv): Promise<GenerateOutcome> {
  const r = p.request;
  const cluster = r.ref.name;
  const id = r.identity;
  const { target, hub } = f;
  const { access, annotations, cluster: cl, result } = p;
  const cancel = env.cancel;
  let step: GenerateStep | undefined;
  const done = async (s: GenerateStep) => {
    step = s;
    await pauseAt(env.hooks?.pauseAt, s, cancel?.signal);
    cancel?.check();
  };
  const log = new ApplyLog<'cluster' | 'hub'>();
  // From the first object on, a second signal names what is on the clusters, also before the undo has begun.
  cancel?.making(() => log.pending());
  try {
    await done('checked');
    let issued: Issued;
    let credentialObject = p.credentialObject;
    for (const obj of p.objects) {
      const applied = await log.apply(target, obj, 'cluster');
      if (obj === p.credentialObject && r.method === 'token') credentialObject = applied;
      await done(stepOf(obj.kind));
    }
    if (id.kind === 'ServiceAccount' && r.method === 'token') {
      issued = await issueBoundToken(
        target,
        id,
        { name: credentialObject!.metadata.name, uid: credentialObject!.metadata.uid! },
        r.durationSeconds,
      );
    } else if (id.kind === 'ServiceAccount') {
      issued = await awaitLegacyToken(target, id.namespace, credentialObject!.metadata.name);
    } else {
      issued = await issueClientCert(target, id, r.durationSeconds, log, annotations);
    }
    result.expires = issued.expires;
    result.anchor = issued.anchor;
    if (result.lifetime) {
      result.lifetime = lifetimeOf(r.durationSeconds, issued.user);
      const shortened = shortenedWarning(result.lifetime, r.method);
      if (shortened) result.warnings.push(shortened);
    }
    await done('mint');

    const facts: Record<string, string> = {
      method: r.method,
      identity: username(id),
      cluster,
      ...identityRecord(f.clusterFacts, 'file'),
      ...(issued.expires ? { expires: issued.expires } : {}),
      // What rotations of this file ask for again (the server's cut is not recorded as a wish).
      ...(result.lifetime ? { lifetime: String(r.durationSeconds) } : {}),
    };
    const kubeconfig = buildKubeconfig({
      name: safeName(r.displayName ?? r.ref.source.context ?? cluster) || 'cluster',
      userName: safeName(username(id)) || 'user',
      cluster: cl,
      user: issued.user,
      namespace: r.namespaces[0],
      facts: r.destination.kind === 'secret' ? undefined : facts,
    });
    result.fingerprint = `sha256:${kubeconfigSha256(kubeconfig)}`;

    // Proved with the credential itself before it is handed anywhere.
    const fresh = await env.connector.context(
      contextFromKubeconfigText(kubeconfig, 'the new credential', 'user'),
      cluster,
    );
    result.verification = await verifyCredential(fresh, {
      username: username(id),
      rules: access.rules,
      namespaces: r.namespaces,
    });
    if (worstStatus(result.verification) === 'fail') {
      const failed = result.verification.filter((c) => c.status === 'fail').map((c) => `${c.name}: ${c.message}`);
      throw new FleetError(
        'server',
        `cluster "${cluster}": the new credential failed verification (${failed.join('; ')}); what this run created was removed, what it changed put back`,
      );
    }
    await done('verify');

    const outcome: GenerateOutcome = { result };
    const destAnnotations: Record<string, string> = {
      ...annotations,
      [ANNOTATIONS.cluster]: cluster,
      ...identityRecord(f.clusterFacts, 'secret'),
      [ANNOTATIONS.expires]: issued.expires ?? 'never',
      [ANNOTATIONS.fingerprint]: kubeconfigSha256(kubeconfig),
      ...(result.lifetime ? { [ANNOTATIONS.lifetime]: String(r.durationSeconds) } : {}),
      ...(result.anchor ? { [ANNOTATIONS.anchor]: `${result.anchor.namespace}/${result.anchor.name}` } : {}),
    };
    if (r.destination.kind === 'file') {
      await writeFileAtomic(kernelPath(r.destination.path), kubeconfig, { mode: 0o600 });
    } else if (r.destination.kind === 'stdout') {
      outcome.kubeconfig = kubeconfig;
    } else {
      const secret = destinationSecret(r.destination, {
        kubeconfig,
        cluster: cl,
        user: issued.user,
        clusterName: cluster,
        displayName: displayName(r),
        annotations: { ...destAnnotations, [ANNOTATIONS.format]: r.destination.format },
      });
      if (f.hubNamespace) await log.apply(hub!, f.hubNamespace, 'hub');
      await log.apply(hub!, secret, 'hub');
      if (r.updateProfile) await updateProfile(hub!, r.updateProfile, result.accessProvider!);
    }
    // Delivered: from here a signal undoes nothing (the command warns that the credential is kept).
    cancel?.delivered(
      r.destination.kind === 'file'
        ? kernelPath(r.destination.path)
        : r.destination.kind === 'stdout'
          ? 'on stdout'
          : `Secret ${r.destination.namespace}/${r.destination.name} on the hub`,
    );
    // The CSR has served its purpose; the certificate carries everything (and a second run must not pile them up).
    if (issued.csr) await deleteObject(target, CERTIFICATE_SIGNING_REQUEST, issued.csr).catch(() => undefined);
    result.objects = log.applied.filter((o) => o.kind !== 'CertificateSigningRequest');
    return outcome;
  } catch (error) {
    cancel?.undoing(() => log.pending());
    const failed = await log.rollback();
    const notRemoved = failed.length > 0 ? `; could not remove: ${failed.join('; ')}` : '';
    if (cancel?.interrupted) {
      const at = step === undefined ? 'before anything was made' : `after step "${step}"`;
      throw cancel.error(
        `${at}: rolled back, ${failed.length > 0 ? 'except what is named here' : 'nothing this run made is left'}${notRemoved}`,
      );
    }
    if (failed.length > 0 && error instanceof Error) error.message += notRemoved;
    throw error;
  }
}

/** Puts the access-provider entry into a ClusterProfile's status (replacing one of the same name), with a resourceVersion precondition. */
async function updateProfile(
  hub: KubeClient,
  p: { namespace: string; name: string },
  entry: { name: string; cluster: Record<string, unknown> },
): Promise<void> {
  const profile = await getObject<KubeObject & { status?: { accessProviders?: Array<{ name: string }> } }>(
    hub,
    CLUSTER_PROFILE,
    p.name,
    { namespace: p.namespace },
  );
  if (!profile)
    throw new ConfigError(
      `--update-profile: ClusterProfile ${p.namespace}/${p.name} not found on hub ${hub.context.contextName}`,
    );
  const list = (profile.status?.accessProviders ?? []).filter((a) => a.name !== entry.name);
  profile.status = { ...profile.status, accessProviders: [...list, entry] };
  await updateObject(hub, profile, { subresource: 'status', what: `update ${describeObject(profile)} status` });
}
