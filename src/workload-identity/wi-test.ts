import type { Check } from '../base/checks.js';
import { connectWithToken } from './connect.js';
import { canICheck, diagnose } from './doctor.js';
import { type Probe, type ProbeResult, obtainToken } from './probe.js';
import { askCanI, authenticate } from './target.js';

/**
 * `wi test`: the path a workload takes, one check per step. TokenRequest on the hub, the token presented to the target,
 * the identity the target maps it to, the expectations; on any failure, what `wi doctor` finds (with the same token).
 */
export async function testWorkloadIdentity(p: Probe): Promise<ProbeResult> {
  const checks: Check[] = [];
  const cred = await obtainToken(p);
  checks.push(cred.check);
  if (!cred.token || !cred.claims) return { audience: p.audience, checks, passed: false };

  const asToken = await connectWithToken(p.target, cred.token, p.options);
  const auth = await authenticate(asToken);
  if (auth.outcome === 'authenticated') {
    checks.push({
      name: 'target-authenticates',
      status: 'pass',
      message: `${p.target.name} authenticated the token as ${auth.user.username} (groups ${auth.user.groups.join(', ') || 'none'})`,
    });
  } else {
    checks.push({
      name: 'target-authenticates',
      status: 'fail',
      message:
        auth.outcome === 'unauthorized'
          ? `${p.target.name} answered 401 Unauthorized`
          : `${p.target.name}: ${auth.error.message}`,
      fix: 'see the diagnosis (fleet wi doctor) below',
    });
  }
  if (p.expectUser) {
    const got = auth.outcome === 'authenticated' ? auth.user.username : undefined;
    checks.push(
      got === p.expectUser
        ? { name: 'expected-user', status: 'pass', message: `mapped to ${got}` }
        : got === undefined
          ? { name: 'expected-user', status: 'skip', message: 'the target did not authenticate the token' }
          : {
              name: 'expected-user',
              status: 'fail',
              message: `mapped to "${got}", expected "${p.expectUser}"`,
              fix: "align claimMappings.username (claim and prefix) in the target's AuthenticationConfiguration with --expect-user and RBAC",
            },
    );
  }
  for (const q of p.canI) {
    // Without authentication every answer is the same 401; asking would only repeat it.
    if (auth.outcome !== 'authenticated')
      checks.push({ name: 'can-i', status: 'skip', message: `${q.text}: not asked, the token did not authenticate` });
    else checks.push(canICheck(q.text, auth, await askCanI(asToken, q)));
  }
  const passed = checks.every((c) => c.status !== 'fail');
  const result: ProbeResult = {
    audience: p.audience,
    claims: cred.claims,
    ...(auth.outcome === 'authenticated' ? { user: auth.user } : {}),
    checks,
    passed,
  };
  // The token step is already the first row; the diagnosis adds what the doctor finds beyond it.
  if (!passed) result.diagnosis = (await diagnose(p, cred)).checks.filter((c) => c !== cred.check);
  return result;
}
