import { UsageError } from '../base/errors.js';
import type { PolicyRule } from './rules-file.js';

/**
 * Access presets: explicit, least-privilege rule lists, written here rather than borrowed from the built-in
 * ClusterRoles (the aggregated `edit` and `admin` roles include impersonating ServiceAccounts, exec into pods and reading
 * Secrets, which is exactly what fleet refuses to hand out by default). Each preset passes fleet's risk rules, except
 * `secrets-reader`, which is refused cluster-wide and allowed per namespace.
 */
const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'update', 'patch', 'delete'];
const rule = (apiGroups: string[], resources: string[], verbs: string[]): PolicyRule => ({
  apiGroups,
  resources,
  verbs,
});

const WORKLOADS_CORE = [
  'pods',
  'pods/log',
  'services',
  'endpoints',
  'configmaps',
  'persistentvolumeclaims',
  'serviceaccounts',
  'events',
  'limitranges',
  'resourcequotas',
];
const WORKLOADS_APPS = [
  'deployments',
  'deployments/scale',
  'replicasets',
  'statefulsets',
  'statefulsets/scale',
  'daemonsets',
];
const BATCH = ['jobs', 'cronjobs'];
const NETWORKING = ['ingresses', 'networkpolicies'];

const view = [
  rule([''], WORKLOADS_CORE, READ),
  rule(['apps'], WORKLOADS_APPS, READ),
  rule(['batch'], BATCH, READ),
  rule(['networking.k8s.io'], NETWORKING, READ),
  rule(['autoscaling'], ['horizontalpodautoscalers'], READ),
  rule(['policy'], ['poddisruptionbudgets'], READ),
];

const editWrites = [
  rule([''], ['pods', 'services', 'configmaps', 'persistentvolumeclaims'], WRITE),
  rule(['apps'], WORKLOADS_APPS, WRITE),
  rule(['batch'], BATCH, WRITE),
  rule(['networking.k8s.io'], NETWORKING, WRITE),
  rule(['autoscaling'], ['horizontalpodautoscalers'], WRITE),
  rule(['policy'], ['poddisruptionbudgets'], WRITE),
];

export interface Preset {
  name: string;
  description: string;
  rules: PolicyRule[];
}

export const PRESETS: Preset[] = [
  { name: 'view', description: 'read workloads, services, config (not Secrets)', rules: view },
  {
    name: 'edit',
    description: 'view, plus change workloads, services, config (not Secrets, no exec, no RBAC)',
    rules: [...view, ...editWrites],
  },
  {
    name: 'namespace-admin',
    description:
      'edit, plus Secrets and Roles/RoleBindings in the namespace (no bind/escalate: it cannot grant more than it has)',
    rules: [
      ...view,
      ...editWrites,
      rule([''], ['secrets'], [...READ, ...WRITE]),
      rule(['rbac.authorization.k8s.io'], ['roles', 'rolebindings'], [...READ, ...WRITE]),
    ],
  },
  { name: 'secrets-reader', description: 'read Secrets (per namespace only)', rules: [rule([''], ['secrets'], READ)] },
  {
    name: 'deployer',
    description: 'roll out applications: Deployments, StatefulSets, Services, ConfigMaps, Ingresses; read Pods',
    rules: [
      rule(['apps'], ['deployments', 'deployments/scale', 'statefulsets', 'statefulsets/scale'], [...READ, ...WRITE]),
      rule([''], ['services', 'configmaps'], [...READ, ...WRITE]),
      rule(['networking.k8s.io'], ['ingresses'], [...READ, ...WRITE]),
      rule([''], ['pods', 'pods/log', 'events'], READ),
      rule(['apps'], ['replicasets'], READ),
    ],
  },
  {
    name: 'pod-lister',
    description: "what multicluster-runtime's kubeconfig example controller needs: list and watch Pods",
    rules: [rule([''], ['pods'], READ)],
  },
];

export function findPreset(name: string): Preset {
  const preset = PRESETS.find((p) => p.name === name);
  if (!preset) throw new UsageError(`--role: no preset "${name}"; presets: ${PRESETS.map((p) => p.name).join(', ')}`);
  return preset;
}
