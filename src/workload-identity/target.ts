import type { V1ClusterRoleBinding, V1RoleBinding } from '@kubernetes/client-node';
import { type AccessQuery, canI, parseAccessQuery } from '../access/can-i.js';
import { type UserInfo, selfSubjectReview } from '../access/whoami.js';
import { FleetError, UsageError, toErrorInfo, type ErrorInfo } from '../base/errors.js';
import type { KubeClient } from '../kube/client.js';
import type { Wire } from '../kube/objects.js';
import { VERSION_PATH } from '../kube/paths.js';
import { CLUSTER_ROLE_BINDING, ROLE_BINDING } from '../kube/resources.js';
import { listObjects } from '../kube/typed.js';

/**
 * What the target does with the hub token: who it says the token is (SelfSubjectReview), and what that identity may do
 * (SelfSubjectAccessReview). A 401 (not authenticated) and a 403 / "not allowed" (authenticated, no RBAC) are different
 * failures with different fixes, so they are kept apart here.
 */
export type Authentication =
  { outcome: 'authenticated'; user: UserInfo } | { outcome: 'unauthorized' } | { outcome: 'error'; error: ErrorInfo };

export async function authenticate(asToken: KubeClient): Promise<Authentication> {
  try {
    return { outcome: 'authenticated', user: await selfSubjectReview(asToken) };
  } catch (error) {
    if (error instanceof FleetError && error.kind === 'unauthorized') return { outcome: 'unauthorized' };
    return { outcome: 'error', error: toErrorInfo(error) };
  }
}

/** One `--can-i "VERB RESOURCE [NAME] [-n NS]"` question. */
export interface CanIQuestion {
  text: string;
  query: AccessQuery;
  namespace: string;
}

export function parseCanI(text: string): CanIQuestion {
  const words = text.trim().split(/\s+/).filter(Boolean);
  let namespace: string | undefined;
  let allNamespaces = false;
  const positional: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (w === '-n' || w === '--namespace') {
      namespace = words[++i];
      if (!namespace) throw new UsageError(`--can-i "${text}": ${w} needs a namespace`);
    } else if (w.startsWith('--namespace=')) namespace = w.slice('--namespace='.length);
    else if (w === '--all-namespaces') allNamespaces = true;
    else if (w.startsWith('-'))
      throw new UsageError(`--can-i "${text}": unknown option ${w} (use -n NAMESPACE or --all-namespaces)`);
    else positional.push(w);
  }
  if (positional.length < 2 || positional.length > 3)
    throw new UsageError(`--can-i "${text}": expected "VERB RESOURCE [NAME] [-n NAMESPACE]"`);
  const query = parseAccessQuery({ verb: positional[0], resource: positional[1], name: positional[2] });
  return { text: text.trim(), query, namespace: allNamespaces ? '' : (namespace ?? 'default') };
}

export type CanIAnswer = { allowed: boolean; reason?: string } | { error: ErrorInfo };

export async function askCanI(asToken: KubeClient, q: CanIQuestion): Promise<CanIAnswer> {
  try {
    const a = await canI(asToken, q.query, q.namespace);
    return { allowed: a.allowed, ...(a.reason ? { reason: a.reason } : {}) };
  } catch (error) {
    return { error: toErrorInfo(error) };
  }
}

type Binding = Wire<V1ClusterRoleBinding> | Wire<V1RoleBinding>;

export interface BindingFinding {
  /** `ClusterRoleBinding/NAME` or `RoleBinding/NS/NAME`, and the role it grants. */
  binding: string;
  role: string;
}

export interface RbacLookup {
  /** Bindings whose subjects name the user exactly (kind User). */
  exact: BindingFinding[];
  /** Bindings that look meant for this identity but cannot match it (prefix forgotten, kind ServiceAccount). */
  nearMisses: Array<BindingFinding & { subject: string }>;
}

/** Reads the target's bindings with the user's own credentials (the hub token may not list RBAC). */
export async function findBindings(
  admin: KubeClient,
  username: string,
  saSubject: string,
  sa: { namespace: string; name: string },
): Promise<RbacLookup> {
  const [crbs, rbs] = await Promise.all([
    listObjects<Binding>(admin, CLUSTER_ROLE_BINDING, { what: 'list clusterrolebindings on the target' }),
    listObjects<Binding>(admin, ROLE_BINDING, { what: 'list rolebindings on the target' }),
  ]);
  const out: RbacLookup = { exact: [], nearMisses: [] };
  const visit = (b: Binding, kind: 'ClusterRoleBinding' | 'RoleBinding') => {
    const name =
      kind === 'ClusterRoleBinding'
        ? `${kind}/${b.metadata?.name}`
        : `${kind}/${b.metadata?.namespace}/${b.metadata?.name}`;
    const role = `${b.roleRef?.kind}/${b.roleRef?.name}`;
    for (const s of b.subjects ?? []) {
      if (s.kind === 'User' && s.name === username) out.exact.push({ binding: name, role });
      else if (s.kind === 'User' && s.name === saSubject)
        out.nearMisses.push({ binding: name, role, subject: `User ${s.name} (no prefix)` });
      else if (s.kind === 'User' && s.name !== undefined && s.name.endsWith(saSubject) && s.name !== username) {
        out.nearMisses.push({ binding: name, role, subject: `User ${s.name} (another prefix)` });
      } else if (s.kind === 'ServiceAccount' && s.name === sa.name && s.namespace === sa.namespace) {
        out.nearMisses.push({
          binding: name,
          role,
          subject: `ServiceAccount ${s.namespace}/${s.name} (the target's own ServiceAccount, not the hub's)`,
        });
      }
    }
  };
  for (const b of crbs) visit(b, 'ClusterRoleBinding');
  for (const b of rbs) visit(b, 'RoleBinding');
  return out;
}

/** The apiserver's /version, asked with the user's credentials. */
export async function serverVersion(
  client: KubeClient,
): Promise<{ gitVersion?: string; major?: string; minor?: string }> {
  return client.json('GET', VERSION_PATH, undefined, `GET ${VERSION_PATH}`);
}
