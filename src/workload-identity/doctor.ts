import { X509Certificate } from 'node:crypto';

import type { Check } from '../base/checks.js';
import { toErrorInfo } from '../base/errors.js';
import { formatAge } from '../base/duration.js';
import type { KubeClient } from '../kube/client.js';
import { OIDC_CONFIGURATION_PATH, VERSION_PATH } from '../kube/paths.js';
import { compareUrls } from './audience.js';
import { type JwtAuthenticator, usernameFor } from './auth-config.js';
import { caPemOf, connectWithToken, originOf } from './connect.js';
import { type DiscoveryDocument, type Fetched, discoveryUrl, fetchAnonymous, verifySignature } from './discovery.js';
import { type MetricsRead, delta, issuerHash, readAuthnMetrics, sha256Label } from './metrics.js';
import { type Credential, type Probe, type ProbeResult, obtainToken } from './probe.js';
import { serviceAccountSubject } from './service-account.js';
import { type Authentication, askCanI, authenticate, findBindings } from './target.js';
import type { TokenClaims } from './token.js';

/** How far apart two clocks may be before it is worth a warning (the API server allows a minute of leeway). */
const SKEW_WARN_SECONDS = 30;
const DISCOVERY_BINDING_FIX =
  'on the hub, bind ClusterRole system:service-account-issuer-discovery to Group system:unauthenticated: ' +
  'kubectl create clusterrolebinding fleet:service-account-issuer-discovery --clusterrole=system:service-account-issuer-discovery --group=system:unauthenticated ' +
  '(or run fleet wi setup --apply)';

const describeCa = (pem: string): string => {
  try {
    const c = new X509Certificate(pem);
    return `${c.subject.split('\n').join(', ')}, SHA-256 ${c.fingerprint256.slice(0, 23)}…`;
  } catch {
    return 'unreadable PEM';
  }
};

function fetchProblem(f: Fetched<unknown>): string {
  if (f.error) return f.error.message;
  return `HTTP ${f.status}${f.serverMessage ? ` (${f.serverMessage})` : ''}`;
}

/** Everything a hub → target pair can be checked for from outside, as checks with fixes. Never throws for a cluster's answer. */
export async function diagnose(p: Probe, given?: Credential): Promise<ProbeResult> {
  const checks: Check[] = [];
  const cred = given ?? (await obtainToken(p));
  checks.push(cred.check);
  if (!cred.token || !cred.claims) return { audience: p.audience, checks, passed: false };
  const { token, claims } = cred;
  const iss = claims.iss ?? '';

  // --- whose token: a token another issuer signed is the cause, whatever else fails after it ---------------------------
  const issuer = await hubIssuerCheck(iss, p);
  checks.push(issuer);
  if (issuer.status === 'fail') {
    const timing = await clocks(p.hub.client, p.target.client);
    checks.push(expiryCheck(claims, timing));
    checks.push(skewCheck(timing));
    // The hub's discovery, keys and CA say nothing about a token the hub did not issue: not checked, not blamed.
    for (const name of ['discovery-anonymous', 'issuer-matches', 'jwks-anonymous', 'signature', 'hub-ca']) {
      checks.push({ name, status: 'skip', message: 'not checked: the token is not from the hub (see hub-issuer)' });
    }
  }

  // --- the hub's side: discovery, keys, CA ---------------------------------------------------------------------------
  const hubCa =
    issuer.status === 'fail'
      ? undefined
      : await caPemOf(p.hub.context.cluster, `hub ${p.hub.name}`).catch(() => undefined);
  const sameOrigin = originOf(iss) !== undefined && originOf(iss) === originOf(p.hub.context.cluster.server ?? '');
  // The CA the target would be given: the hub kubeconfig's, when the hub's API server serves its own issuer URL.
  const issuerCa = sameOrigin ? hubCa : undefined;
  if (issuer.status !== 'fail') {
    const discovery = iss ? await fetchAnonymous<DiscoveryDocument>(discoveryUrl(iss), issuerCa, p.options) : undefined;
    const [jwks, timing] = await Promise.all([
      discovery?.value?.jwks_uri
        ? fetchAnonymous<unknown>(
            discovery.value.jwks_uri,
            originOf(discovery.value.jwks_uri) === originOf(iss) ? issuerCa : undefined,
            p.options,
          )
        : Promise.resolve(undefined),
      clocks(p.hub.client, p.target.client),
    ]);

    checks.push(expiryCheck(claims, timing));
    checks.push(skewCheck(timing));
    checks.push(discoveryCheck(iss, discovery));
    checks.push(issuerCheck(iss, discovery));
    checks.push(jwksCheck(discovery, jwks));
    checks.push(await signatureCheck(token, jwks));
    checks.push(caCheck(iss, discovery, issuerCa, sameOrigin, p));
  }

  // --- the target's side ---------------------------------------------------------------------------------------------
  const asToken = await connectWithToken(p.target, token, p.options);
  // The target's authenticator metrics around the one authentication of this token tell which authenticator saw it.
  const before = await readAuthnMetrics(p.target.client);
  const auth = await authenticate(asToken);
  const after = before.readable ? await readAuthnMetrics(p.target.client) : before;
  checks.push(audienceCheck(p, claims, auth));
  const entry = p.authConfig ? configEntry(p.authConfig.config.jwt, iss) : undefined;
  if (p.authConfig) checks.push(...(await configChecks(p, claims, entry, auth)), configInUseCheck(p, after));
  checks.push(
    issuer.status === 'fail'
      ? {
          name: 'target-trusts-issuer',
          status: 'skip',
          message: 'not checked: the token is not from the hub (see hub-issuer)',
        }
      : trustCheck(p, iss, auth, before, after),
  );
  checks.push(responseCheck(p, auth, checks));

  const username =
    auth.outcome === 'authenticated'
      ? auth.user.username
      : ((entry?.entry && usernameFor(entry.entry, claimsRecord(claims)).username) ?? p.expectUser);
  checks.push(expectCheck(p, auth));
  checks.push(await rbacCheck(p, username, auth));
  for (const q of p.canI) checks.push(canICheck(q.text, auth, await askCanI(asToken, q)));

  return {
    audience: p.audience,
    claims,
    ...(auth.outcome === 'authenticated' ? { user: auth.user } : {}),
    checks,
    passed: checks.every((c) => c.status !== 'fail'),
  };
}

/**
 * Whether the hub issued the token: its `iss` against the issuer the hub publishes (its discovery document, read with
 * the hub credential). A token from another issuer (a member's own ServiceAccount token, another hub's) fails every
 * later hub-side check for reasons that are not the hub's; this says the real one first.
 */
async function hubIssuerCheck(iss: string, p: Probe): Promise<Check> {
  const name = 'hub-issuer';
  let hubIss: string | undefined;
  try {
    const r = await p.hub.client.request('GET', OIDC_CONFIGURATION_PATH);
    if (r.status === 200) hubIss = (JSON.parse(r.body) as { issuer?: unknown }).issuer as string | undefined;
    if (typeof hubIss !== 'string' || hubIss === '') {
      return {
        name,
        status: 'skip',
        message: `not checked: the hub's /.well-known/openid-configuration ${r.status === 200 ? 'names no issuer' : `answered HTTP ${r.status}`}`,
      };
    }
  } catch (error) {
    return {
      name,
      status: 'skip',
      message: `not checked: the hub's issuer could not be read: ${toErrorInfo(error).message}`,
    };
  }
  if (iss === hubIss) return { name, status: 'pass', message: `the token's iss is the hub's issuer (${hubIss})` };
  const m = compareUrls(iss, hubIss);
  return {
    name,
    status: 'fail',
    message: iss
      ? `the token's iss "${iss}" is not the hub's issuer "${hubIss}"${m.kind === 'normalised' ? ` (they differ by ${m.differences.join(', ')}; issuers are compared byte for byte)` : ''}: the hub did not issue this token, so the target's trust in the hub does not cover it`
      : `the token has no iss claim; the hub's issuer is "${hubIss}"`,
    fix: `use a token the hub ${p.hub.name} issued for ${p.serviceAccount.namespace}/${p.serviceAccount.name} (kubectl create token on the hub with --audience ${p.audience}, or fleet wi test without --token-file)`,
  };
}

const claimsRecord = (c: TokenClaims): Record<string, unknown> => ({ iss: c.iss, sub: c.sub, aud: c.aud });

interface Clocks {
  localMs: number;
  hubMs?: number;
  targetMs?: number;
}

/** The Date header of each API server (second resolution), to compare clocks with each other and with ours. */
async function clocks(hub: KubeClient, target: KubeClient): Promise<Clocks> {
  const dateOf = async (c: KubeClient) => {
    try {
      const r = await c.request('GET', VERSION_PATH);
      const d = r.headers.date;
      return typeof d === 'string' ? Date.parse(d) : undefined;
    } catch {
      return undefined;
    }
  };
  const [hubMs, targetMs] = await Promise.all([dateOf(hub), dateOf(target)]);
  return { localMs: Date.now(), hubMs, targetMs };
}

function expiryCheck(c: TokenClaims, t: Clocks): Check {
  // The target judges expiry by its own clock; ours stands in when it did not say.
  const now = t.targetMs ?? t.localMs;
  const exp = c.exp ? Date.parse(c.exp) : undefined;
  const nbf = c.nbf ? Date.parse(c.nbf) : undefined;
  if (exp === undefined)
    return {
      name: 'expiry',
      status: 'warn',
      message: 'the token has no exp claim',
      fix: 'ServiceAccount tokens from TokenRequest always expire; check where this token came from',
    };
  if (exp <= now) {
    return {
      name: 'expiry',
      status: 'fail',
      message: `the token expired at ${c.exp} (${formatAge(c.exp, now)} by the target's clock)`,
      fix: 'request a new token (TokenRequest); a workload should re-read its projected token file, which the kubelet refreshes',
    };
  }
  if (nbf !== undefined && nbf > now + 60_000) {
    return {
      name: 'expiry',
      status: 'fail',
      message: `the token is not valid before ${c.nbf}, ${Math.round((nbf - now) / 1000)} s ahead of the target's clock`,
      fix: 'synchronise the clocks of hub and target (NTP)',
    };
  }
  return { name: 'expiry', status: 'pass', message: `valid until ${c.exp} (${Math.round((exp - now) / 1000)} s left)` };
}

function skewCheck(t: Clocks): Check {
  if (t.hubMs === undefined || t.targetMs === undefined)
    return { name: 'clock-skew', status: 'skip', message: 'hub or target sent no Date header' };
  // The Date headers were read a moment before `localMs`; their resolution is one second.
  const hubTarget = Math.round((t.targetMs - t.hubMs) / 1000);
  const localHub = Math.round((t.hubMs - t.localMs) / 1000);
  const text = `target - hub ${hubTarget} s, hub - local ${localHub} s`;
  if (Math.abs(hubTarget) > SKEW_WARN_SECONDS) {
    return {
      name: 'clock-skew',
      status: 'warn',
      message: `clocks differ: ${text}`,
      fix: 'synchronise the clocks of hub and target (NTP); a token can look expired or not yet valid to the target',
    };
  }
  return { name: 'clock-skew', status: 'pass', message: `clocks agree (${text})` };
}

function discoveryCheck(iss: string, d: Fetched<DiscoveryDocument> | undefined): Check {
  if (!iss)
    return {
      name: 'discovery-anonymous',
      status: 'fail',
      message: 'the token has no iss claim',
      fix: 'ServiceAccount tokens always carry iss; check where this token came from',
    };
  if (d?.value)
    return { name: 'discovery-anonymous', status: 'pass', message: `${d.url} is readable without credentials` };
  if (d?.status === 401 || d?.status === 403) {
    return {
      name: 'discovery-anonymous',
      status: 'fail',
      message: `${d.url} is not readable without credentials (${fetchProblem(d)}); the target fetches it anonymously and rejects every hub token until it can`,
      fix: DISCOVERY_BINDING_FIX,
    };
  }
  if (d?.error?.kind === 'tls') {
    return {
      name: 'discovery-anonymous',
      status: 'fail',
      message: `${d.url}: ${d.error.message}`,
      fix: 'see hub-ca: the target needs the CA that serves the issuer URL',
    };
  }
  return {
    name: 'discovery-anonymous',
    status: 'fail',
    message: `${d?.url ?? discoveryUrl(iss)}: ${d ? fetchProblem(d) : 'not fetched'}`,
    fix: "the issuer URL must be the hub's --service-account-issuer and reachable from the target",
  };
}

function issuerCheck(iss: string, d: Fetched<DiscoveryDocument> | undefined): Check {
  if (!d?.value) return { name: 'issuer-matches', status: 'skip', message: 'no discovery document to compare with' };
  const doc = d.value.issuer;
  if (doc === iss)
    return {
      name: 'issuer-matches',
      status: 'pass',
      message: `the discovery document's issuer equals the token's iss (${iss})`,
    };
  const m = compareUrls(String(doc), iss);
  return {
    name: 'issuer-matches',
    status: 'fail',
    message: `the discovery document says issuer "${doc}" but the token's iss is "${iss}"${m.kind === 'normalised' ? ` (they differ by ${m.differences.join(', ')})` : ''}; the target requires them to be byte-equal`,
    fix: "the hub's --service-account-issuer, the discovery document and the target's issuer.url must be the same string",
  };
}

function jwksCheck(d: Fetched<DiscoveryDocument> | undefined, jwks: Fetched<unknown> | undefined): Check {
  if (!d?.value) return { name: 'jwks-anonymous', status: 'skip', message: 'no discovery document, so no jwks_uri' };
  if (!d.value.jwks_uri)
    return {
      name: 'jwks-anonymous',
      status: 'fail',
      message: 'the discovery document has no jwks_uri',
      fix: "set the hub's --service-account-jwks-uri",
    };
  if (jwks?.value)
    return { name: 'jwks-anonymous', status: 'pass', message: `${jwks.url} is readable without credentials` };
  const denied = jwks?.status === 401 || jwks?.status === 403;
  return {
    name: 'jwks-anonymous',
    status: 'fail',
    message: `${d.value.jwks_uri}: ${jwks ? fetchProblem(jwks) : 'not fetched'}`,
    fix: denied ? DISCOVERY_BINDING_FIX : "the jwks_uri must be reachable from the target with the issuer's CA",
  };
}

async function signatureCheck(token: string, jwks: Fetched<unknown> | undefined): Promise<Check> {
  if (!jwks?.value) return { name: 'signature', status: 'skip', message: 'no JWKS to verify against' };
  const r = await verifySignature(token, jwks.value);
  if (r.ok)
    return {
      name: 'signature',
      status: 'pass',
      message: `the signature verifies against the published JWKS (kid ${r.kid ?? 'none'})`,
    };
  return {
    name: 'signature',
    status: 'fail',
    message: r.reason,
    fix: 'the token must come from this hub; if the hub rotated keys, keep the old public key in --service-account-key-file until old tokens expire',
  };
}

function caCheck(
  iss: string,
  d: Fetched<DiscoveryDocument> | undefined,
  ca: string | undefined,
  sameOrigin: boolean,
  p: Probe,
): Check {
  if (d?.error?.kind === 'tls') {
    return {
      name: 'hub-ca',
      status: 'fail',
      message: `the issuer's certificate does not verify with ${ca ? `the hub kubeconfig's CA (${describeCa(ca)})` : 'the system roots'}`,
      fix: "give the target the CA that signed the issuer URL's serving certificate as issuer.certificateAuthority",
    };
  }
  if (!sameOrigin) {
    return {
      name: 'hub-ca',
      status: d?.value ? 'pass' : 'skip',
      message: `the issuer ${iss} is not the hub's API server ${p.hub.context.cluster.server}; ${d?.value ? 'its certificate verifies with the system roots' : 'not checked'}`,
    };
  }
  if (p.hub.context.cluster['insecure-skip-tls-verify']) {
    return {
      name: 'hub-ca',
      status: 'warn',
      message: 'the hub kubeconfig skips TLS verification, so fleet cannot tell which CA the target needs',
      fix: "put the hub's CA in its kubeconfig, then run fleet wi setup to print it in the target's configuration",
    };
  }
  if (!ca)
    return {
      name: 'hub-ca',
      status: d?.value ? 'pass' : 'skip',
      message:
        'the hub is trusted through the system roots; the target needs no certificateAuthority if it trusts them too',
    };
  if (!d?.value && d?.error) return { name: 'hub-ca', status: 'skip', message: `not checked: ${d.error.message}` };
  return {
    name: 'hub-ca',
    status: 'pass',
    message: `the issuer's certificate verifies with the hub kubeconfig's CA (${describeCa(ca)}); the target needs it as issuer.certificateAuthority`,
  };
}

function audienceCheck(p: Probe, c: TokenClaims, auth: Authentication): Check {
  // Convention (Flux's generic provider, fleet wi setup): the audience is the target's address exactly as written.
  const target = p.target.context.cluster.server ?? '';
  const matches = c.aud.map((aud) => ({ aud, match: compareUrls(aud, target) }));
  const exact = matches.find((m) => m.match.kind === 'exact');
  const close = matches.find((m) => m.match.kind === 'normalised');
  if (exact)
    return { name: 'audience', status: 'pass', message: `aud ${exact.aud} is the target's address exactly as written` };
  if (auth.outcome === 'authenticated')
    return {
      name: 'audience',
      status: 'pass',
      message: `aud ${c.aud.join(',')} is not the target's address ${target}, but the target lists it among its audiences`,
    };
  if (close && close.match.kind === 'normalised') {
    return {
      name: 'audience',
      status: 'fail',
      message: `aud "${close.aud}" and the target's address "${target}" differ only by ${close.match.differences.join(', ')}, but audiences are compared byte for byte`,
      fix: 'request the token with the exact string listed in the target\'s issuer.audiences (Flux: the ConfigMap\'s "audiences", which defaults to "address" as written)',
    };
  }
  return {
    name: 'audience',
    status: 'fail',
    message: `aud ${c.aud.map((a) => `"${a}"`).join(', ') || '(none)'} is not the target's address "${target}"`,
    fix: `request the token with --audience ${target} (the target's own URL, what fleet wi setup puts in its issuer.audiences)`,
  };
}

function configEntry(
  entries: JwtAuthenticator[],
  iss: string,
): { entry?: JwtAuthenticator; index?: number; near?: { entry: JwtAuthenticator; index: number; how: string } } {
  const index = entries.findIndex((e) => e.issuer.url === iss);
  if (index !== -1) return { entry: entries[index], index };
  for (const [i, e] of entries.entries()) {
    const m = compareUrls(e.issuer.url, iss);
    if (m.kind === 'normalised') return { near: { entry: e, index: i, how: m.differences.join(', ') } };
  }
  return {};
}

async function configChecks(
  p: Probe,
  c: TokenClaims,
  found: ReturnType<typeof configEntry> | undefined,
  auth: Authentication,
): Promise<Check[]> {
  const file = p.authConfig!.file;
  const iss = c.iss ?? '';
  const out: Check[] = [];
  const entry = found?.entry;
  if (entry)
    out.push({
      name: 'config-issuer',
      status: 'pass',
      message: `${file}: jwt[${found.index}].issuer.url is the token's iss ${iss}`,
    });
  else if (found?.near) {
    out.push({
      name: 'config-issuer',
      status: 'fail',
      message: `${file}: jwt[${found.near.index}].issuer.url "${found.near.entry.issuer.url}" differs from the hub's issuer "${iss}" by ${found.near.how}; the API server compares them byte for byte`,
      fix: `set jwt[${found.near.index}].issuer.url to exactly "${iss}" (the hub's --service-account-issuer)`,
    });
  } else {
    const urls = p.authConfig!.config.jwt.map((e) => e.issuer.url);
    out.push({
      name: 'config-issuer',
      status: 'fail',
      message: `${file}: no jwt entry for issuer ${iss} (${urls.length > 0 ? `has ${urls.join(', ')}` : 'no jwt entries'}): the target does not trust the hub`,
      fix: 'add the jwt entry that fleet wi setup prints',
    });
  }
  const e = entry ?? found?.near?.entry;
  if (!e) return out;
  const auds = e.issuer.audiences ?? [];
  const hit = c.aud.find((a) => auds.includes(a));
  if (hit)
    out.push({ name: 'config-audience', status: 'pass', message: `issuer.audiences contains the token's aud ${hit}` });
  else {
    const close = c.aud
      .flatMap((a) => auds.map((x) => ({ a, x, m: compareUrls(a, x) })))
      .find((r) => r.m.kind === 'normalised');
    out.push({
      name: 'config-audience',
      status: 'fail',
      message: `issuer.audiences [${auds.join(', ')}] does not contain the token's aud ${c.aud.join(', ')}${close && close.m.kind === 'normalised' ? ` ("${close.x}" differs by ${close.m.differences.join(', ')})` : ''}`,
      fix: 'list the exact audience the hub token is requested with',
    });
  }
  const ca = e.issuer.certificateAuthority;
  if (iss) {
    const viaConfig = await fetchAnonymous<DiscoveryDocument>(
      e.issuer.discoveryURL ?? discoveryUrl(iss),
      ca,
      p.options,
    );
    if (viaConfig.error?.kind === 'tls') {
      out.push({
        name: 'config-ca',
        status: 'fail',
        message: `the issuer's certificate does not verify with ${ca ? 'issuer.certificateAuthority' : 'the system roots (no issuer.certificateAuthority)'}`,
        fix: "set issuer.certificateAuthority to the CA that signed the hub's serving certificate (fleet wi setup prints it)",
      });
    } else {
      out.push({
        name: 'config-ca',
        status: viaConfig.error ? 'skip' : 'pass',
        message: viaConfig.error
          ? `not checked: ${viaConfig.error.message}`
          : `the issuer's certificate verifies with ${ca ? 'issuer.certificateAuthority' : 'the system roots'}`,
      });
    }
  }
  const mapped = usernameFor(e, claimsRecord(c));
  if (!mapped.username)
    out.push({
      name: 'config-username',
      status: 'warn',
      message: mapped.why ?? 'no username',
      fix: 'map the username from the sub claim with a prefix',
    });
  else {
    const want = p.expectUser ?? (auth.outcome === 'authenticated' ? auth.user.username : undefined);
    const ok = want === undefined || want === mapped.username;
    out.push({
      name: 'config-username',
      status: ok ? 'pass' : 'fail',
      message: `claim mappings make the user "${mapped.username}"${want !== undefined && !ok ? `, not "${want}"` : ''}`,
      ...(ok ? {} : { fix: 'RBAC on the target must name the mapped username, prefix included' }),
    });
  }
  return out;
}

/** Whether the target has an authenticator for exactly this issuer, from its own metrics around our one request. */
function trustCheck(p: Probe, iss: string, auth: Authentication, before: MetricsRead, after: MetricsRead): Check {
  const name = 'target-trusts-issuer';
  if (auth.outcome === 'authenticated')
    return { name, status: 'pass', message: `the target accepted the token, so it trusts ${iss}` };
  if (!after.readable)
    return { name, status: 'skip', message: `cannot read the target's authenticator metrics (${after.why})` };
  const seen = delta(before, after, issuerHash(iss));
  if (seen) {
    const failures = seen.failure ?? 0;
    return {
      name,
      status: 'pass',
      message: `the target has a JWT authenticator for exactly ${iss}${failures > 0 ? ', and it rejected this token: the failing checks say why' : ''}`,
    };
  }
  return {
    name,
    status: 'fail',
    message: `the target has no JWT authenticator for issuer ${iss}: it does not trust the hub (an entry whose url is spelt differently, e.g. with a trailing slash or :443, does not count: the API server compares byte for byte)`,
    fix: `give the target's API server --authentication-config with the jwt entry fleet wi setup --hub ${p.hub.name} --target ${p.target.name} prints (or run wi doctor with --authentication-config FILE to check the file it has)`,
  };
}

/** Whether the file the user gave is the configuration the target runs (it exports the hash of its file). */
function configInUseCheck(p: Probe, m: MetricsRead): Check {
  const name = 'config-in-use';
  if (!m.readable) return { name, status: 'skip', message: `cannot read the target's metrics (${m.why})` };
  if (m.configHashes.length === 0)
    return {
      name,
      status: 'warn',
      message:
        'the target reports no authentication configuration: its API server runs without --authentication-config',
      fix: "start the target's kube-apiserver with --authentication-config pointing at this file",
    };
  const mine = sha256Label(p.authConfig!.raw);
  if (m.configHashes.includes(mine))
    return { name, status: 'pass', message: `the target runs exactly ${p.authConfig!.file}` };
  return {
    name,
    status: 'warn',
    message: `the target runs another authentication configuration than ${p.authConfig!.file} (${m.configHashes[0].slice(0, 19)}…): this file is not the one its API server reads, or it has not reloaded it`,
    fix: "put the file where the target's kube-apiserver reads --authentication-config (1.30+ reloads it on change)",
  };
}

function responseCheck(p: Probe, auth: Authentication, before: Check[]): Check {
  const name = 'target-response';
  if (auth.outcome === 'authenticated')
    return { name, status: 'pass', message: `the target authenticated the token as ${auth.user.username}` };
  if (auth.outcome === 'error')
    return {
      name,
      status: 'fail',
      message: `the target did not answer: ${auth.error.message}`,
      fix: `check that ${p.target.name} is reachable`,
    };
  const causes = before.filter((c) => c.status === 'fail').map((c) => c.name);
  return {
    name,
    status: 'fail',
    message: `the target answered 401 Unauthorized${causes.length > 0 ? `; the failing checks explain why: ${causes.join(', ')}` : '; every check fleet can make from outside passes, so the target most likely does not trust this issuer and audience'}`,
    fix:
      causes.length > 0
        ? 'fix the checks named above'
        : `compare the target's AuthenticationConfiguration with what fleet wi setup prints (or run wi doctor with --authentication-config FILE)`,
  };
}

function expectCheck(p: Probe, auth: Authentication): Check {
  if (!p.expectUser) return { name: 'expected-user', status: 'skip', message: 'no --expect-user given' };
  if (auth.outcome !== 'authenticated')
    return { name: 'expected-user', status: 'skip', message: 'the target did not authenticate the token' };
  if (auth.user.username === p.expectUser)
    return { name: 'expected-user', status: 'pass', message: `the target maps the token to ${p.expectUser}` };
  const bare = serviceAccountSubject(p.serviceAccount);
  return {
    name: 'expected-user',
    status: 'fail',
    message: `the target maps the token to "${auth.user.username}", expected "${p.expectUser}"`,
    fix: auth.user.username.endsWith(bare)
      ? 'the username prefix differs: align claimMappings.username.prefix with RBAC on the target'
      : "check claimMappings.username in the target's AuthenticationConfiguration",
  };
}

async function rbacCheck(p: Probe, username: string | undefined, auth: Authentication): Promise<Check> {
  const name = 'target-rbac';
  if (!username)
    return {
      name,
      status: 'skip',
      message:
        'the mapped username is unknown (the target did not authenticate the token; give --expect-user or --authentication-config)',
    };
  let found;
  try {
    found = await findBindings(p.target.client, username, serviceAccountSubject(p.serviceAccount), p.serviceAccount);
  } catch (error) {
    return {
      name,
      status: 'skip',
      message: `cannot read the target's RBAC with your credentials: ${toErrorInfo(error).message}`,
    };
  }
  if (found.exact.length > 0)
    return {
      name,
      status: 'pass',
      message: `User ${username} is bound by ${found.exact.map((b) => `${b.binding} (${b.role})`).join(', ')}`,
    };
  const near = found.nearMisses.map((n) => `${n.binding} names ${n.subject}`).join('; ');
  const authed = auth.outcome === 'authenticated';
  return {
    name,
    status: 'fail',
    message: `no RoleBinding or ClusterRoleBinding on the target names User ${username}${authed ? ': it authenticates (no 401), but beyond what every authenticated user may do its requests are forbidden (403)' : ''}${near ? `; ${near}` : ''}`,
    fix: `bind a role to kind User, name "${username}" (prefix included): fleet wi setup --hub ${p.hub.name} --target ${p.target.name} --service-account ${p.serviceAccount.namespace}/${p.serviceAccount.name} --role view --apply`,
  };
}

export function canICheck(text: string, auth: Authentication, a: Awaited<ReturnType<typeof askCanI>>): Check {
  const name = 'can-i';
  if ('error' in a) {
    if (a.error.kind === 'unauthorized')
      return {
        name,
        status: 'fail',
        message: `${text}: 401 Unauthorized: the target does not accept the token at all (not an RBAC problem)`,
        fix: 'run fleet wi doctor',
      };
    return { name, status: 'fail', message: `${text}: ${a.error.message}` };
  }
  const who = auth.outcome === 'authenticated' ? auth.user.username : 'the token';
  if (a.allowed) return { name, status: 'pass', message: `${text}: allowed for ${who}` };
  return {
    name,
    status: 'fail',
    message: `${text}: ${who} is authenticated but not allowed (a request would get 403 Forbidden)${a.reason ? `: ${a.reason}` : ''}`,
    fix: `grant it on the target with a RoleBinding or ClusterRoleBinding to kind User "${who}"`,
  };
}
