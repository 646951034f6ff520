import semver from 'semver';

import type { Check, CheckStatus } from '../base/checks.js';
import { formatAge, formatLifetime } from '../base/duration.js';
import { type ErrorInfo, toErrorInfo } from '../base/errors.js';
import { canI } from '../access/can-i.js';
import { rulesReview } from '../access/rules.js';
import { MASTERS_GROUP, type WhoAmI, whoami } from '../access/whoami.js';
import { type ProbeResult, probe } from '../clusters/probe.js';
import type { ClusterTask } from '../fleet/runner.js';
import type { KubeClient } from '../kube/client.js';
import type { ExecCredentialRunner } from '../kube/exec-credential.js';
import { transportFix } from '../kube/errors.js';
import { READYZ_PATH } from '../kube/paths.js';
import { AUTH_LABEL } from '../providers/ref.js';
import { caKind, describeCertificate, describeCredentials, isoSeconds } from '../kubeconfig/credentials.js';
import type { EffectivePolicy, Severity } from './policy.js';

/** The checks, in the order they run and are shown; their names are stable (JSON, JUnit testcase names, table columns). */
export const CHECK_NAMES = [
  'provider-ready',
  'reachable',
  'tls-verified',
  'authenticated',
  'identity',
  'permissions',
  'forbidden-power',
  'credential-lifetime',
  'server-version',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

/** What verification found besides the checks, for the JSON and the summary. */
export interface VerifyFacts {
  username?: string;
  groups?: string[];
  version?: string;
  /** The earliest expiry of the credential, when one is known. */
  expires?: string;
  /** How long GET /version took, in milliseconds (the probe's round trip; the exporter's probe duration). */
  latencyMs?: number;
}

/**
 * The checks of one cluster as they are decided. Kept outside the per-cluster work so that checks already decided
 * survive a cluster time limit that cuts the work short.
 */
export class CheckList {
  private readonly decided = new Map<CheckName, Check>();
  readonly facts: VerifyFacts = {};
  /** Aborted when the cluster's time limit passes: the work may still run on, but decides nothing more. */
  private signal?: AbortSignal;

  bind(signal: AbortSignal): void {
    this.signal = signal;
  }

  set(name: CheckName, status: CheckStatus, message: string, fix?: string): void {
    if (!this.signal?.aborted) this.put(name, status, message, fix);
  }

  private put(name: CheckName, status: CheckStatus, message: string, fix?: string): void {
    this.decided.set(name, {
      name,
      status,
      message,
      ...(fix && (status === 'fail' || status === 'warn') ? { fix } : {}),
    });
  }

  has(name: CheckName): boolean {
    return this.decided.has(name);
  }

  /**
   * Every check in order: a failure of the whole run lands on the first undecided check, the rest are skipped. With
   * `blamed`, that check has already taken the failure and the rest are skipped naming it.
   */
  finish(failure?: ErrorInfo, blamed?: CheckName): Check[] {
    for (const name of CHECK_NAMES) {
      if (this.decided.has(name)) continue;
      if (failure && !blamed) {
        blamed = name;
        this.put(name, 'fail', failure.message, fixFor(name, failure));
      } else this.put(name, 'skip', blamed ? `not checked: ${blamed} failed` : 'not checked');
    }
    return CHECK_NAMES.map((n) => this.decided.get(n)!);
  }
}

export interface VerifyOptions {
  /** The command's exec runner: the one the cluster's requests used, so its cached credential is the one judged. */
  exec: ExecCredentialRunner;
  now?: () => number;
}

const ANONYMOUS = 'the server treats the requests as anonymous: no credential was presented or accepted';
const ANONYMOUS_FIX = 'configure a credential for this context (token, client certificate or exec plugin)';

const skip = (list: CheckList, names: CheckName[], why: string) => {
  for (const n of names) if (!list.has(n)) list.set(n, 'skip', why);
};

/** Runs every check on one cluster into `list`. Never throws for a cluster problem: each becomes a check outcome. */
export async function verifyCluster(
  task: ClusterTask,
  policy: EffectivePolicy,
  options: VerifyOptions,
  list: CheckList,
): Promise<void> {
  const { ref, client } = task;
  const now = options.now ?? Date.now;
  list.bind(task.signal);
  if (ref.ready) list.set('provider-ready', 'pass', `ready in provider ${ref.provider}`);
  else
    list.set(
      'provider-ready',
      'fail',
      `not ready in provider ${ref.provider}: ${ref.reason ?? 'no reason given'}`,
      'see why the provider reports the cluster not ready (fleet clusters inspect)',
    );

  const p = await probe(client);
  if (p.version) list.facts.version = p.version.gitVersion;
  if (p.latencyMs !== undefined) list.facts.latencyMs = p.latencyMs;
  const failure = p.error?.kind;
  const answered = Boolean(p.version) || failure === 'unauthorized' || failure === 'forbidden';
  await reachability(client, p, list);
  tlsCheck(client, p, policy, list);
  versionCheck(p, policy, list);

  let me: WhoAmI | undefined;
  if (failure === 'plugin' || failure === 'config') {
    list.set('authenticated', 'fail', p.error!.message, fixFor('authenticated', p.error!));
  } else if (!answered) {
    skip(list, ['authenticated'], 'not checked: the server was not reached');
  } else {
    try {
      me = await whoami(client);
    } catch (error) {
      const info = toErrorInfo(error);
      if (info.kind === 'unauthorized')
        list.set(
          'authenticated',
          'fail',
          'the server rejected the credential (401 Unauthorized)',
          fixFor('authenticated', info),
        );
      else if (info.kind === 'forbidden' && info.message.includes('"system:anonymous"'))
        list.set('authenticated', 'fail', ANONYMOUS, ANONYMOUS_FIX);
      else if (info.kind === 'forbidden')
        list.set(
          'authenticated',
          'fail',
          info.message,
          'allow the identity to create selfsubjectreviews (the built-in system:basic-user role does)',
        );
      else list.set('authenticated', 'fail', info.message, fixFor('authenticated', info));
    }
  }
  if (me) {
    list.facts.username = me.user.username;
    list.facts.groups = me.user.groups;
    if (me.user.username === 'system:anonymous' || me.user.groups.includes('system:unauthenticated')) {
      list.set('authenticated', 'fail', ANONYMOUS, ANONYMOUS_FIX);
      me = undefined;
    } else {
      list.set('authenticated', 'pass', `as ${me.user.username} (groups: ${me.user.groups.join(', ') || 'none'})`);
    }
  }
  if (me) {
    identityCheck(me, policy, list);
    await permissionsCheck(client, policy, list);
    await powerCheck(client, me, policy, list);
  } else skip(list, ['identity', 'permissions', 'forbidden-power'], 'not checked: not authenticated');

  if (failure === 'plugin' || failure === 'config')
    skip(list, ['credential-lifetime'], 'not checked: no credential could be obtained');
  else await lifetimeCheck(client, policy, options.exec, now(), list);
}

async function reachability(client: KubeClient, p: ProbeResult, list: CheckList): Promise<void> {
  const where = client.serverUrl;
  if (p.readyz?.ok) {
    list.set('reachable', 'pass', `${where} is ready (/readyz) in ${p.latencyMs}ms`);
    return;
  }
  if (p.readyz) {
    // /readyz?verbose lists every check as [+]name ok or [-]name failed: name the failing ones.
    const failing = await client
      .request('GET', `${READYZ_PATH}?verbose`, undefined, { accept: 'text/plain' })
      .then((r) => [...r.body.matchAll(/^\[-\]([^\s]+) failed/gm)].map((m) => m[1]))
      .catch(() => [] as string[]);
    const detail = failing.length > 0 ? `failing checks: ${failing.join(', ')}` : p.readyz.message;
    list.set(
      'reachable',
      'fail',
      `${where} is not ready (/readyz HTTP ${p.readyz.status}): ${detail}`,
      'look at the API server and the components it reports (kubectl get --raw "/readyz?verbose")',
    );
    return;
  }
  const kind = p.error?.kind;
  if (kind === 'unauthorized' || kind === 'forbidden') {
    list.set('reachable', 'pass', `${where} answered (readiness not visible to this credential: ${kind})`);
  } else if (kind === 'tls') {
    list.set('reachable', 'skip', 'not checked: TLS verification failed');
  } else if (kind === 'plugin' || kind === 'config') {
    list.set('reachable', 'skip', 'not checked: no credential to connect with');
  } else if (p.error) {
    list.set('reachable', 'fail', p.error.message, fixFor('reachable', p.error));
  }
}

function tlsCheck(client: KubeClient, p: ProbeResult, policy: EffectivePolicy, list: CheckList): void {
  const cluster = client.context.cluster;
  if (cluster['insecure-skip-tls-verify'] === true) {
    const fix =
      'set certificate-authority-data (or certificate-authority) for the cluster and remove insecure-skip-tls-verify';
    if (policy.allowInsecure)
      list.set(
        'tls-verified',
        'warn',
        'insecure-skip-tls-verify is set (allowed by the policy): the server certificate is not verified',
        fix,
      );
    else
      list.set('tls-verified', 'fail', 'insecure-skip-tls-verify is set: the server certificate is not verified', fix);
    return;
  }
  if (p.error?.kind === 'tls') {
    list.set(
      'tls-verified',
      'fail',
      p.error.message,
      transportFix(p.error) ??
        'trust the CA that signed the server certificate (certificate-authority-data) and check the server name (tls-server-name)',
    );
  } else if (p.tls?.mode === 'verified') {
    const ca = caKind(cluster);
    list.set(
      'tls-verified',
      'pass',
      `server certificate verified against the ${ca === 'system' ? 'system trust store' : ca === 'file' ? 'CA file' : 'embedded CA'}`,
    );
  } else {
    list.set('tls-verified', 'skip', 'not checked: no TLS connection was made');
  }
}

function versionCheck(p: ProbeResult, policy: EffectivePolicy, list: CheckList): void {
  const git = p.version?.gitVersion;
  if (!policy.versionRange) {
    list.set(
      'server-version',
      'skip',
      git ? `${git} (no version range in the policy)` : 'no version range in the policy',
    );
    return;
  }
  if (!git) {
    list.set('server-version', 'skip', 'not checked: the server did not tell its version');
    return;
  }
  // Distributions suffix the version (v1.30.2-eks-1a2b3c, v1.31.1+k3s1); the Kubernetes version is what the range means.
  const version = semver.coerce(git);
  if (!version) list.set('server-version', 'fail', `cannot read "${git}" as a version`);
  else if (semver.satisfies(version, policy.versionRange))
    list.set('server-version', 'pass', `${git} is within ${policy.versionRange}`);
  else
    list.set(
      'server-version',
      'fail',
      `${git} is outside ${policy.versionRange}`,
      'upgrade the cluster, or change version.range in the policy',
    );
}

function identityCheck(me: WhoAmI, policy: EffectivePolicy, list: CheckList): void {
  const want = policy.identity;
  if (!want) {
    list.set('identity', 'skip', 'no expected identity in the policy');
    return;
  }
  const { username, groups } = me.user;
  const problems: string[] = [];
  if (want.username !== undefined && username !== want.username)
    problems.push(`username is ${username}, expected ${want.username}`);
  if (want.pattern && !want.pattern.test(username))
    problems.push(`username ${username} does not match ${want.patternText}`);
  const missing = want.groups.filter((g) => !groups.includes(g));
  if (missing.length > 0) problems.push(`not in group${missing.length === 1 ? '' : 's'} ${missing.join(', ')}`);
  if (problems.length > 0)
    list.set('identity', 'fail', problems.join('; '), 'use the credential of the expected identity for this cluster');
  else list.set('identity', 'pass', `${username} is the expected identity`);
}

async function permissionsCheck(client: KubeClient, policy: EffectivePolicy, list: CheckList): Promise<void> {
  if (policy.permissions.length === 0) {
    list.set('permissions', 'skip', 'no required permissions in the policy');
    return;
  }
  const denied: string[] = [];
  const errors: string[] = [];
  for (const p of policy.permissions) {
    try {
      const answer = await canI(client, p.query, p.namespace);
      if (!answer.allowed) denied.push(p.text);
    } catch (error) {
      errors.push(`${p.text}: ${toErrorInfo(error).message}`);
    }
  }
  const n = policy.permissions.length;
  if (errors.length > 0)
    list.set(
      'permissions',
      'fail',
      `could not ask: ${errors.join('; ')}`,
      'check that the server serves SelfSubjectAccessReview (authorization.k8s.io/v1)',
    );
  else if (denied.length > 0) {
    list.set(
      'permissions',
      'fail',
      `${denied.length} of ${n} denied: ${denied.join('; ')}`,
      'grant the identity these permissions (a Role or ClusterRole and a binding), or use a credential that has them',
    );
  } else list.set('permissions', 'pass', `all ${n} allowed`);
}

async function powerCheck(client: KubeClient, me: WhoAmI, policy: EffectivePolicy, list: CheckList): Promise<void> {
  const found: Array<{ severity: Severity; text: string }> = [];
  if (me.user.groups.includes(MASTERS_GROUP))
    found.push({ severity: policy.systemMasters, text: `member of ${MASTERS_GROUP} (RBAC cannot restrict it)` });
  if (me.warnings.some((w) => w.code === 'cluster-admin'))
    found.push({ severity: policy.clusterAdmin, text: 'may do anything cluster-wide (cluster-admin)' });
  const notes: string[] = [];
  if (policy.risks.length > 0) {
    for (const ns of policy.riskNamespaces) {
      try {
        const review = await rulesReview(client, ns);
        const codes = [...new Set(review.risks.map((r) => r.code).filter((c) => policy.risks.includes(c)))];
        if (codes.length > 0)
          found.push({ severity: policy.riskSeverity, text: `risks in namespace ${ns}: ${codes.join(', ')}` });
        if (review.incomplete) notes.push(`the rules review of ${ns} is incomplete`);
      } catch (error) {
        found.push({ severity: 'fail', text: `cannot review rules in ${ns}: ${toErrorInfo(error).message}` });
      }
    }
  }
  const counted = found.filter((f) => f.severity !== 'allow');
  const status: CheckStatus = counted.some((f) => f.severity === 'fail')
    ? 'fail'
    : counted.length > 0
      ? 'warn'
      : 'pass';
  const checked = [
    `${MASTERS_GROUP}${policy.systemMasters === 'allow' ? ' (allowed)' : ''}`,
    `cluster-admin${policy.clusterAdmin === 'allow' ? ' (allowed)' : ''}`,
    ...(policy.risks.length > 0 ? [`risks ${policy.risks.join(', ')} in ${policy.riskNamespaces.join(', ')}`] : []),
  ];
  const allowed = found.filter((f) => f.severity === 'allow').map((f) => `${f.text}, allowed by the policy`);
  const message =
    status === 'pass'
      ? `none found (checked ${checked.join('; ')})${allowed.length > 0 ? `; ${allowed.join('; ')}` : ''}`
      : counted.map((f) => f.text).join('; ');
  list.set(
    'forbidden-power',
    status,
    [message, ...notes].join('; '),
    'use a least-privilege credential: bind only the roles the pipeline needs, not system:masters or cluster-admin',
  );
}

/** One expiry the lifetime check judges: what it is, when it ends, when it began (when known), and whether something renews it. */
interface Expiry {
  what: string;
  at: string;
  issued?: string;
  /** Renewed on demand by the exec plugin: judged valid now, not by minLifetime (docs/verify.md). */
  refreshed: boolean;
}

const STATUS_RANK: Record<CheckStatus, number> = { pass: 0, skip: 0, warn: 1, fail: 2 };

async function lifetimeCheck(
  client: KubeClient,
  policy: EffectivePolicy,
  exec: ExecCredentialRunner,
  now: number,
  list: CheckList,
): Promise<void> {
  const { cluster, user } = client.context;
  const expiries: Expiry[] = [];
  const description = await describeCredentials(cluster, user);
  if (description.certificate)
    expiries.push({
      what: 'client certificate',
      at: description.certificate.notAfter,
      issued: description.certificate.notBefore,
      refreshed: false,
    });
  if (description.token?.expires)
    expiries.push({
      what: 'token (JWT exp)',
      at: description.token.expires,
      issued: description.token.issuedAt,
      refreshed: false,
    });
  if (user.exec) {
    try {
      if (!client.plugin) throw new Error(`exec plugin ${user.exec.command ?? ''}: not approved by the trust policy`);
      // The runner's cache holds the credential the checks above used; this does not run the plugin again.
      const cred = await exec.get(client.plugin, cluster);
      if (cred.expirationTimestamp)
        expiries.push({
          what: 'exec plugin credential (expirationTimestamp)',
          at: isoSeconds(new Date(cred.expirationTimestamp)),
          refreshed: true,
        });
      if (cred.clientCertificateData) {
        const c = describeCertificate(cred.clientCertificateData);
        expiries.push({ what: 'exec plugin client certificate', at: c.notAfter, issued: c.notBefore, refreshed: true });
      }
    } catch (error) {
      list.set(
        'credential-lifetime',
        'fail',
        toErrorInfo(error).message,
        'fix the exec plugin so that it returns a credential',
      );
      return;
    }
  }
  if (description.auth === 'none') {
    list.set('credential-lifetime', 'skip', 'no credential configured');
    return;
  }
  if (expiries.length === 0) {
    const why = user.exec
      ? 'the exec plugin gave no expirationTimestamp'
      : description.token
        ? 'the token carries no expiry'
        : `${description.auth} credential with no expiry`;
    list.set('credential-lifetime', 'pass', `no expiry known (${why})`);
    return;
  }
  expiries.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  list.facts.expires = expiries[0].at;
  // The worst verdict wins; among equals, the earliest expiry (the list is sorted) is the one reported.
  const verdicts = expiries.map((e) => judgeExpiry(e, policy, description.auth, now));
  const worst = verdicts.reduce((a, b) => (STATUS_RANK[b.status] > STATUS_RANK[a.status] ? b : a));
  list.set('credential-lifetime', worst.status, worst.message, worst.fix);
}

/**
 * The verdict on one expiry. A credential the exec plugin renews must be valid now: the
 * plugin ran and its answer has not expired; it is fetched again when it does. A stored credential (a client
 * certificate, a token in the kubeconfig or a file) must outlive the run's use (`minLifetime`), and warns early
 * (`warnLifetime`) when it was issued to last longer than the warning period: one issued for less is short-lived by
 * design and its issuer replaces it, so a warning on every run would only teach people to ignore warnings.
 */
function judgeExpiry(
  e: Expiry,
  policy: EffectivePolicy,
  auth: string,
  now: number,
): { status: CheckStatus; message: string; fix?: string } {
  const left = Date.parse(e.at) - now;
  const when = `${e.what} expires ${e.at}, in ${formatAge(e.at, now)}`;
  if (e.refreshed) {
    if (left <= 0)
      return {
        status: 'fail',
        message: `${e.what} ${formatAge(e.at, now)} (${e.at}): the exec plugin returned a credential that is no longer valid`,
        fix: 'run the exec plugin by hand: it must return a credential that is valid now (log in again if it caches a session)',
      };
    return { status: 'pass', message: `${when}; the exec plugin renews it (valid now is enough)` };
  }
  if (left <= 0)
    return {
      status: 'fail',
      message: `${e.what} ${formatAge(e.at, now)} (${e.at})`,
      fix: 'renew the credential: it is stored, nothing renews it (fleet creds rotate for one fleet issued)',
    };
  if (left < policy.minLifetimeMs) {
    const lower = formatLifetime(Math.max(60, Math.floor(left / 60_000) * 60));
    return {
      status: 'fail',
      message: `${when}: under the minimum of ${policy.minLifetime} (credentials.minLifetime)`,
      fix: `issue a credential that lives longer than ${policy.minLifetime}; or, if it is short-lived by design, lower credentials.minLifetime for such clusters: add under rules: {selector: "${AUTH_LABEL}=${auth}", checks: {credentials: {minLifetime: ${lower}}}}`,
    };
  }
  const issuedFor = e.issued ? Date.parse(e.at) - Date.parse(e.issued) : Number.POSITIVE_INFINITY;
  if (policy.warnLifetimeMs !== undefined && left < policy.warnLifetimeMs && issuedFor > policy.warnLifetimeMs) {
    return {
      status: 'warn',
      message: `${when}: under ${policy.warnLifetime} (credentials.warnLifetime)`,
      fix: `renew the credential before it expires: it is stored, nothing renews it (fleet creds rotate for one fleet issued)`,
    };
  }
  return { status: 'pass', message: `${when} (minimum ${policy.minLifetime})` };
}

/** What to do about a failure, by the check it lands on and its kind. */
function fixFor(name: CheckName, e: ErrorInfo): string {
  const transport = transportFix(e);
  if (transport) return transport;
  switch (e.kind) {
    case 'unreachable':
      return 'check the server address and the network path to it, and that the API server is running';
    case 'timeout':
      return 'check the network path and the server load, or raise --request-timeout / --cluster-timeout';
    case 'tls':
      return 'trust the CA that signed the server certificate (certificate-authority-data) and check the server name';
    case 'unauthorized':
      return 'renew the credential: the server no longer accepts it';
    case 'plugin':
      return 'run the exec plugin by hand to see why it fails';
    case 'config':
      return 'fix the kubeconfig or provider entry named in the message';
    default:
      return name === 'provider-ready'
        ? 'see why the provider cannot give a connection (fleet clusters inspect)'
        : 'see the message';
  }
}
