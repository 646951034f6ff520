// The provider table of the conformance suite (test/e2e/providers-conformance.test.ts): one entry per provider type,
// each with its features and a fixture-maker that makes and removes real clusters of that provider on the test control
// plane. Adding a provider is adding one entry to PROVIDERS (see the suite's header).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  type Cluster,
  type ClusterSpec,
  type HubAccess,
  type Kit,
  type ProviderEntry,
  type Scope,
  type SuiteEnv,
  applyMany,
  hubAdminAccess,
  memberKubeconfigText,
  viaKubeconfig,
} from './conformance.js';
import { applyYaml, kubectl, tokenUser } from './fixture.js';
import { type Kcp, startKcp } from './kcp.js';
import {
  type ArgocdConfigJson,
  argocdNamespace,
  argocdSecretObject,
  breakArgocdCluster,
  createArgocdCluster,
  removeArgocdCluster,
} from './argocd.js';

const FAKE_KIND = fileURLToPath(new URL('../fixtures/providers/fake-kind/kind', import.meta.url));
const EXEC_INFO_PLUGIN = fileURLToPath(new URL('../fixtures/providers/exec-info-plugin.mjs', import.meta.url));

const b64 = (s: string) => Buffer.from(s).toString('base64');
const docs = (objects: object[]) => objects.map((o) => JSON.stringify(o)).join('\n---\n');
/** A kubeconfig of the wrong shape: `clusters` must be a list. */
const WRONG_SHAPE_KUBECONFIG = 'apiVersion: v1\nkind: Config\nclusters: {oops: 1}\ncontexts: []\nusers: []\n';

/** The member-1 user the ready clusters' kubeconfigs hold. */
const alice = (env: SuiteEnv) => tokenUser(env.cp.members[0], 'alice');

/** The text of a kubeconfig for a spec's credential: alice's token, or the refused plugin. */
function credentialText(env: SuiteEnv, context: string, spec: ClusterSpec): string {
  if (spec.state === 'wrong-shape') return WRONG_SHAPE_KUBECONFIG;
  const user = spec.state === 'refused-plugin' ? { exec: { command: spec.plugin } } : { token: alice(env).token };
  return memberKubeconfigText(env, context, user);
}

function secret(
  name: string,
  namespace: string,
  data: Record<string, string>,
  o: { labels?: Record<string, string>; type?: string; finalizers?: string[] } = {},
) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: o.type ?? 'Opaque',
    metadata: { name, namespace, labels: o.labels ?? {}, ...(o.finalizers ? { finalizers: o.finalizers } : {}) },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  };
}

async function patchStatus(env: SuiteEnv, resource: string, name: string, namespace: string, status: object) {
  await kubectl(env.cp.hub, [
    'patch',
    resource,
    name,
    '-n',
    namespace,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status }),
  ]);
}

/** A namespace of its own on the hub for a scope of a hub-backed provider. */
async function hubNamespace(
  env: SuiteEnv,
  id: string,
): Promise<{ ns: string; dir: string; hub: (via?: HubAccess) => string }> {
  const ns = `${env.run}-${id}`;
  const dir = join(env.dir, ns);
  mkdirSync(dir, { recursive: true });
  await applyYaml(env.cp.hub, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
  return { ns, dir, hub: (via) => (via ? viaKubeconfig(dir, ns, via) : env.cp.hub.kubeconfig) };
}

const dropNamespace = (env: SuiteEnv, ns: string) =>
  kubectl(env.cp.hub, ['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']);

/** Lets go of the Secrets a `not-ready` case held in deletion with a finalizer (`NAMESPACE/NAME` each). */
async function releaseHeld(env: SuiteEnv, held: string[]): Promise<void> {
  for (const key of held) {
    const [ns, name] = key.split('/');
    await kubectl(env.cp.hub, [
      'patch',
      'secret',
      name,
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":null}}',
    ]).catch(() => undefined);
  }
}

const MCR_LABEL = 'sigs.k8s.io/multicluster-runtime-kubeconfig';
const HOLD = 'conformance.fleet.dev/hold';
const CAPI_SECRET_TYPE = 'cluster.x-k8s.io/secret';

// ---------------------------------------------------------------------------------------------------------------------

const file: ProviderEntry = {
  type: 'file',
  sourceKind: 'kubeconfig-file',
  features: ['list', 'names', 'short-names', 'labels', 'not-ready', 'refused-plugin', 'removal', 'wrong-shape'],
  notApplicable: {
    paging: 'kubeconfig files are read whole: there is no page',
    'hub-gone': 'no hub: the clusters are in local files',
  },
  pluginTrust: 'user',
  // kubectl refuses a kubeconfig file it cannot read whole, and so does fleet (one line naming the file and the field).
  wrongShape: 'provider-fails',
  async start(env) {
    return {
      async scope(id): Promise<Scope> {
        const dir = join(env.dir, `file-${id}`);
        mkdirSync(dir, { recursive: true });
        const rules: { context: string; labels: Record<string, string> }[] = [];
        const fileOf = (cid: string) => join(dir, `${cid}.kubeconfig`);
        return {
          baseline: [],
          entry: () => ({ type: 'file', kubeconfig: [dir], ...(rules.length > 0 ? { labels: rules } : {}) }),
          async add(spec): Promise<Cluster> {
            const path = fileOf(spec.id);
            if (spec.labels) rules.push({ context: spec.id, labels: spec.labels });
            const base = { id: spec.id, name: `${path}+${spec.id}`, alias: spec.id };
            if (spec.state === 'not-ready') {
              writeFileSync(
                path,
                `apiVersion: v1\nkind: Config\nclusters:\n- name: ${spec.id}\n  cluster: {}\nusers:\n- name: u\n  user: {token: conformance}\ncontexts:\n- name: ${spec.id}\n  context: {cluster: ${spec.id}, user: u}\n`,
                { mode: 0o600 },
              );
              return { ...base, reason: new RegExp(`^${path}: cluster "${spec.id}" has no server$`) };
            }
            if (spec.state === 'wrong-shape') {
              writeFileSync(path, WRONG_SHAPE_KUBECONFIG, { mode: 0o600 });
              return { ...base, reason: new RegExp(`${path}: "clusters" must be a list`) };
            }
            writeFileSync(path, credentialText(env, spec.id, spec), { mode: 0o600 });
            if (spec.state === 'refused-plugin') return { ...base, reason: new RegExp(spec.plugin) };
            return { ...base, server: env.cp.members[0].url, auth: 'token' };
          },
          remove: async (c) => rmSync(fileOf(c.id)),
        };
      },
    };
  },
};

// ---------------------------------------------------------------------------------------------------------------------

const kubeconfigSecrets: ProviderEntry = {
  type: 'kubeconfig',
  sourceKind: 'secret',
  features: ['list', 'names', 'labels', 'not-ready', 'refused-plugin', 'removal', 'wrong-shape', 'paging', 'hub-gone'],
  notApplicable: { 'short-names': 'a cluster is named after its Secret: there is no shorter name' },
  pluginTrust: 'data',
  async start(env): Promise<Kit> {
    const held: string[] = [];
    return {
      hub: await hubAdminAccess(env),
      async scope(id): Promise<Scope> {
        const { ns, hub } = await hubNamespace(env, `kc-${id}`);
        return {
          baseline: [],
          entry: (via) => ({ type: 'kubeconfig', namespace: ns, hub: { kubeconfig: hub(via) } }),
          async add(spec): Promise<Cluster> {
            const labels = { [MCR_LABEL]: 'true', ...spec.labels };
            const hold = spec.state === 'not-ready' ? [HOLD] : undefined;
            await applyYaml(
              env.cp.hub,
              docs([
                secret(spec.id, ns, { kubeconfig: credentialText(env, spec.id, spec) }, { labels, finalizers: hold }),
              ]),
            );
            const base = { id: spec.id, name: spec.id };
            switch (spec.state) {
              case 'not-ready':
                // Being deleted, held by a finalizer: upstream stops engaging it; fleet lists it, not ready.
                held.push(`${ns}/${spec.id}`);
                await kubectl(env.cp.hub, ['delete', 'secret', spec.id, '-n', ns, '--wait=false']);
                return { ...base, reason: /^the Secret is being deleted$/ };
              case 'refused-plugin':
                return { ...base, reason: new RegExp(`exec plugin "${spec.plugin}" is named by hub data`) };
              case 'wrong-shape':
                return {
                  ...base,
                  reason: new RegExp(`^secret ${ns}/${spec.id} key kubeconfig: "clusters" must be a list`),
                };
              default:
                return { ...base, server: env.cp.members[0].url, auth: 'token' };
            }
          },
          remove: async (c) => void (await kubectl(env.cp.hub, ['delete', 'secret', c.id, '-n', ns])),
          async addMany(n) {
            const text = credentialText(env, 'many', { id: 'many' });
            const names = Array.from({ length: n }, (_, i) => `c-${String(i).padStart(4, '0')}`);
            await applyMany(
              env,
              names.map((name) => secret(name, ns, { kubeconfig: text }, { labels: { [MCR_LABEL]: 'true' } })),
            );
            return names;
          },
          cleanup: () => dropNamespace(env, ns).then(() => undefined),
        };
      },
      stop: () => releaseHeld(env, held),
    };
  },
};

// ---------------------------------------------------------------------------------------------------------------------

const clusterApi: ProviderEntry = {
  type: 'cluster-api',
  sourceKind: 'cluster-api',
  features: [
    'list',
    'names',
    'short-names',
    'labels',
    'not-ready',
    'refused-plugin',
    'removal',
    'wrong-shape',
    'paging',
    'hub-gone',
  ],
  notApplicable: {},
  pluginTrust: 'data',
  async start(env): Promise<Kit> {
    return {
      hub: await hubAdminAccess(env),
      async scope(id): Promise<Scope> {
        const { ns, hub } = await hubNamespace(env, `capi-${id}`);
        const cluster = (name: string, labels: Record<string, string> = {}) => ({
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Cluster',
          metadata: { name, namespace: ns, labels },
          spec: {},
        });
        const kubeconfigSecret = (name: string, text: string) =>
          secret(`${name}-kubeconfig`, ns, { value: text }, { type: CAPI_SECRET_TYPE });
        return {
          baseline: [],
          entry: (via) => ({ type: 'cluster-api', namespace: ns, hub: { kubeconfig: hub(via) } }),
          async add(spec): Promise<Cluster> {
            // The Cluster object is what may be of the wrong shape here: its Secret holds a good kubeconfig.
            const text = credentialText(env, spec.id, spec.state === 'wrong-shape' ? { id: spec.id } : spec);
            await applyYaml(env.cp.hub, docs([cluster(spec.id, spec.labels), kubeconfigSecret(spec.id, text)]));
            const base = { id: spec.id, name: `${ns}/${spec.id}`, alias: spec.id };
            if (spec.state === 'not-ready')
              return {
                ...base,
                reason:
                  /^control plane not initialized \(status\.initialization\.controlPlaneInitialized is not true\)$/,
              };
            if (spec.state === 'wrong-shape') {
              // A string where Cluster API has a boolean: not taken for true.
              await patchStatus(env, 'clusters.cluster.x-k8s.io', spec.id, ns, {
                initialization: { controlPlaneInitialized: 'true' },
              });
              return { ...base, reason: /status\.initialization\.controlPlaneInitialized is not true/ };
            }
            await patchStatus(env, 'clusters.cluster.x-k8s.io', spec.id, ns, {
              initialization: { controlPlaneInitialized: true },
            });
            if (spec.state === 'refused-plugin')
              return { ...base, reason: new RegExp(`exec plugin "${spec.plugin}" is named by hub data`) };
            return { ...base, server: env.cp.members[0].url, auth: 'token' };
          },
          remove: async (c) =>
            void (await kubectl(env.cp.hub, ['delete', 'clusters.cluster.x-k8s.io', c.id, '-n', ns]).then(() =>
              kubectl(env.cp.hub, ['delete', 'secret', `${c.id}-kubeconfig`, '-n', ns]),
            )),
          async addMany(n) {
            const text = credentialText(env, 'many', { id: 'many' });
            const ids = Array.from({ length: n }, (_, i) => `w-${String(i).padStart(4, '0')}`);
            await applyMany(
              env,
              ids.flatMap((i) => [cluster(i), kubeconfigSecret(i, text)]),
            );
            return ids.map((i) => `${ns}/${i}`);
          },
          cleanup: () => dropNamespace(env, ns).then(() => undefined),
        };
      },
    };
  },
};

// ---------------------------------------------------------------------------------------------------------------------

const healthy = (status: 'True' | 'False') => [
  {
    type: 'ControlPlaneHealthy',
    status,
    reason: status === 'True' ? 'Healthy' : 'Unreachable',
    message: status === 'True' ? '' : 'lease expired',
    lastTransitionTime: '2026-01-01T00:00:00Z',
  },
];

const clusterInventory: ProviderEntry = {
  type: 'cluster-inventory',
  sourceKind: 'cluster-profile',
  features: [
    'list',
    'names',
    'short-names',
    'labels',
    'not-ready',
    'refused-plugin',
    'removal',
    'wrong-shape',
    'paging',
    'hub-gone',
  ],
  notApplicable: {},
  // The plugin is named by the access-provider file, which is the user's.
  pluginTrust: 'user',
  async start(env): Promise<Kit> {
    const m1 = env.cp.members[0];
    const tokenFile = join(env.dir, 'inventory-alice.token');
    writeFileSync(tokenFile, alice(env).token, { mode: 0o600 });
    return {
      hub: await hubAdminAccess(env),
      allowedPlugins: [EXEC_INFO_PLUGIN],
      async scope(id): Promise<Scope> {
        const { ns, dir, hub } = await hubNamespace(env, `inv-${id}`);
        const accessFile = join(dir, 'access.json');
        const exec = (command: string) => ({
          apiVersion: 'client.authentication.k8s.io/v1',
          command,
          args: [],
          provideClusterInfo: true,
        });
        const providers: object[] = [{ name: 'conformance', execConfig: exec(EXEC_INFO_PLUGIN) }];
        const writeAccess = () => writeFileSync(accessFile, JSON.stringify({ providers }));
        writeAccess();
        const profile = (name: string, labels: Record<string, string> = {}) => ({
          apiVersion: 'multicluster.x-k8s.io/v1alpha1',
          kind: 'ClusterProfile',
          metadata: { name, namespace: ns, labels },
          spec: { clusterManager: { name: 'fleet-conformance' } },
        });
        const access = (name: string) => ({
          name,
          cluster: {
            server: m1.url,
            'certificate-authority-data': b64(readFileSync(m1.caFile, 'utf8')),
            extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { tokenFile } }],
          },
        });
        return {
          baseline: [],
          entry: (via) => ({
            type: 'cluster-inventory',
            namespace: ns,
            providerFile: accessFile,
            hub: { kubeconfig: hub(via) },
          }),
          async add(spec): Promise<Cluster> {
            await applyYaml(env.cp.hub, docs([profile(spec.id, spec.labels)]));
            const base = { id: spec.id, name: `${ns}/${spec.id}`, alias: spec.id };
            const patch = (status: object) => patchStatus(env, 'clusterprofiles', spec.id, ns, status);
            switch (spec.state) {
              case 'not-ready':
                await patch({ conditions: healthy('False'), accessProviders: [access('conformance')] });
                return { ...base, reason: /^ControlPlaneHealthy is False \(Unreachable\): lease expired$/ };
              case 'refused-plugin':
                providers.unshift({ name: `refused-${spec.id}`, execConfig: exec(spec.plugin) });
                writeAccess();
                await patch({ conditions: healthy('True'), accessProviders: [access(`refused-${spec.id}`)] });
                return { ...base, reason: new RegExp(spec.plugin) };
              case 'wrong-shape':
                // A mapping where the API has a list of access providers.
                await patch({ conditions: healthy('True'), accessProviders: { name: 'conformance' } });
                return { ...base, reason: /status\.accessProviders must be a list/ };
              default:
                await patch({ conditions: healthy('True'), accessProviders: [access('conformance')] });
                return { ...base, server: m1.url, auth: 'exec' };
            }
          },
          remove: async (c) => void (await kubectl(env.cp.hub, ['delete', 'clusterprofiles', c.id, '-n', ns])),
          async addMany(n) {
            const ids = Array.from({ length: n }, (_, i) => `p-${String(i).padStart(4, '0')}`);
            await applyMany(
              env,
              ids.map((i) => profile(i)),
            );
            return ids.map((i) => `${ns}/${i}`);
          },
          cleanup: () => dropNamespace(env, ns).then(() => undefined),
        };
      },
    };
  },
};

// ---------------------------------------------------------------------------------------------------------------------

const SCOPE_LABEL = 'conformance.fleet.dev/scope';

const namespaces: ProviderEntry = {
  type: 'namespace',
  sourceKind: 'namespace',
  features: ['list', 'names', 'labels', 'removal', 'paging', 'hub-gone'],
  notApplicable: {
    'short-names': 'a cluster is named after its namespace: there is no shorter name',
    'not-ready': 'upstream engages a namespace until it is gone, terminating or not: every listed namespace is ready',
    'refused-plugin':
      "every namespace is reached with the hub context's own credential: a plugin refused there fails the listing itself",
    'wrong-shape': 'the API server validates Namespaces: none of another shape can be stored',
  },
  async start(env): Promise<Kit> {
    const made: string[] = [];
    return {
      hub: await hubAdminAccess(env),
      async scope(id): Promise<Scope> {
        const scope = `${env.run}-ns-${id}`;
        const dir = join(env.dir, `ns-${id}`);
        mkdirSync(dir, { recursive: true });
        made.push(scope);
        const namespace = (name: string, labels: Record<string, string> = {}) => ({
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name, labels: { ...labels, [SCOPE_LABEL]: scope } },
        });
        return {
          baseline: [],
          entry: (via) => ({
            type: 'namespace',
            selector: `${SCOPE_LABEL}=${scope}`,
            hub: { kubeconfig: via ? viaKubeconfig(dir, scope, via) : env.cp.hub.kubeconfig },
          }),
          async add(spec): Promise<Cluster> {
            const name = `${scope}-${spec.id}`;
            await applyYaml(env.cp.hub, docs([namespace(name, spec.labels)]));
            return { id: spec.id, name, server: env.cp.hub.url, auth: 'client-cert' };
          },
          remove: async (c) => void (await kubectl(env.cp.hub, ['delete', 'namespace', c.name, '--timeout=60s'])),
          async addMany(n) {
            const names = Array.from({ length: n }, (_, i) => `${scope}-${String(i).padStart(4, '0')}`);
            await applyMany(
              env,
              names.map((name) => namespace(name)),
            );
            return names;
          },
        };
      },
      async stop() {
        for (const scope of made)
          await kubectl(env.cp.hub, ['delete', 'namespace', '-l', `${SCOPE_LABEL}=${scope}`, '--wait=false']);
      },
    };
  },
};

// ---------------------------------------------------------------------------------------------------------------------

const kind: ProviderEntry = {
  type: 'kind',
  sourceKind: 'kind',
  features: ['list', 'names', 'not-ready', 'refused-plugin', 'removal', 'wrong-shape'],
  notApplicable: {
    'short-names': 'a cluster is named as kind names it: there is no shorter name',
    labels: 'kind clusters carry no labels (only fleet.dev/auth, which the listing case checks)',
    paging: '`kind get clusters` answers whole: there is no page',
    'hub-gone': 'no hub: the clusters come from the kind command',
  },
  pluginTrust: 'user',
  async start(env): Promise<Kit> {
    return {
      async scope(id): Promise<Scope> {
        // The stand-in for the kind CLI answers from this directory (test/fixtures/providers/fake-kind).
        const dir = join(env.dir, `kind-${id}`);
        mkdirSync(dir, { recursive: true });
        const names: string[] = [];
        const writeNames = () => writeFileSync(join(dir, 'clusters'), names.map((n) => `${n}\n`).join(''));
        writeNames();
        return {
          baseline: [],
          env: { FAKE_KIND_DIR: dir },
          entry: () => ({ type: 'kind', command: FAKE_KIND }),
          async add(spec): Promise<Cluster> {
            names.push(spec.id);
            writeNames();
            const base = { id: spec.id, name: spec.id };
            if (spec.state === 'not-ready')
              return {
                ...base,
                reason: new RegExp(
                  `^${FAKE_KIND} get kubeconfig --name ${spec.id} exited with 1: ERROR: could not locate any control plane nodes`,
                ),
              };
            writeFileSync(join(dir, `${spec.id}.kubeconfig`), credentialText(env, `kind-${spec.id}`, spec));
            if (spec.state === 'wrong-shape')
              return { ...base, reason: new RegExp(`^kind cluster ${spec.id}: "clusters" must be a list`) };
            if (spec.state === 'refused-plugin') return { ...base, reason: new RegExp(spec.plugin) };
            return { ...base, server: env.cp.members[0].url, auth: 'token' };
          },
          async remove(c) {
            names.splice(names.indexOf(c.id), 1);
            writeNames();
            rmSync(join(dir, `${c.id}.kubeconfig`), { force: true });
          },
        };
      },
    };
  },
};

// ---------------------------------------------------------------------------------------------------------------------

const kcp: ProviderEntry = {
  type: 'kcp',
  sourceKind: 'kcp-workspace',
  features: ['list', 'names', 'labels', 'not-ready', 'removal', 'hub-gone'],
  notApplicable: {
    'short-names': 'a cluster is named by its workspace path: there is no shorter name',
    'refused-plugin':
      "every workspace is reached with the kcp context's own credential: a plugin refused there fails the listing itself",
    'wrong-shape': 'kcp validates Workspaces against their schema: none of another shape can be stored',
    paging:
      'each Workspace is a logical cluster kcp initializes (about a second each here): a level of more than 500 is out of a test run; the walk lists through the same paged Hub.listObjects as the hub providers',
  },
  async start(env): Promise<Kit> {
    // A shard alone (no front proxy): the provider's walk is the same, and it starts in half the time.
    const server: Kcp = await startKcp({ frontProxy: false });
    return {
      hub: { url: server.url('shard'), caFile: server.caFile, token: server.users.admin.token! },
      async scope(id): Promise<Scope> {
        const root = `root:${id}`;
        await server.createWorkspace(root);
        const dir = join(env.dir, `kcp-${id}`);
        mkdirSync(dir, { recursive: true });
        const kubeconfig = server.kubeconfig({ via: 'shard', workspace: root, path: join(dir, 'admin.kubeconfig') });
        return {
          baseline: [root],
          entry: (via) => ({
            type: 'kcp',
            hub: { kubeconfig: via ? viaKubeconfig(dir, id, via, `/clusters/${root}`) : kubeconfig },
          }),
          async add(spec): Promise<Cluster> {
            const path = `${root}:${spec.id}`;
            if (spec.state === 'not-ready') {
              await server.createNotReadyWorkspace(path);
              return { id: spec.id, name: path, reason: /^workspace phase is Initializing/ };
            }
            const ws = await server.createWorkspace(path);
            if (spec.labels)
              await server.kubectl(
                ['label', 'workspace', spec.id, ...Object.entries(spec.labels).map(([k, v]) => `${k}=${v}`)],
                { workspace: root, via: 'shard' },
              );
            return { id: spec.id, name: path, server: ws.url, auth: 'token' };
          },
          async remove(c) {
            await server.kubectl(['delete', 'workspace', c.id, '--timeout=60s'], { workspace: root, via: 'shard' });
          },
        };
      },
      stop: () => server.stop(),
    };
  },
};

// ---------------------------------------------------------------------------------------------------------------------

/** Argo CD cluster Secrets in a namespace of the hub, written in the shape Argo CD's database layer writes (argocd.ts). */
const argocd: ProviderEntry = {
  type: 'argocd',
  sourceKind: 'argocd-cluster',
  features: [
    'list',
    'names',
    'short-names',
    'labels',
    'not-ready',
    'refused-plugin',
    'removal',
    'wrong-shape',
    'paging',
    'hub-gone',
  ],
  notApplicable: {},
  pluginTrust: 'data',
  async start(env): Promise<Kit> {
    const held: string[] = [];
    const member = env.cp.members[0];
    const caData = readFileSync(member.caFile).toString('base64');
    const ready = (): ArgocdConfigJson => ({ bearerToken: alice(env).token, tlsClientConfig: { caData } });
    return {
      hub: await hubAdminAccess(env),
      async scope(id): Promise<Scope> {
        const ns = `${env.run}-argo-${id}`;
        const dir = join(env.dir, ns);
        mkdirSync(dir, { recursive: true });
        // No in-cluster entry: the scope lists only what the case makes.
        await argocdNamespace(env.cp.hub, ns, { inClusterEnabled: false });
        return {
          baseline: [],
          entry: (via) => ({
            type: 'argocd',
            namespace: ns,
            hub: { kubeconfig: via ? viaKubeconfig(dir, ns, via) : env.cp.hub.kubeconfig },
          }),
          async add(spec): Promise<Cluster> {
            // Argo CD's name differs from the Secret's, which is the short name that also finds it.
            const name = `argo-${spec.id}`;
            const secretName = spec.id;
            const config: ArgocdConfigJson =
              spec.state === 'refused-plugin'
                ? {
                    execProviderConfig: { command: spec.plugin, apiVersion: 'client.authentication.k8s.io/v1' },
                    tlsClientConfig: { caData },
                  }
                : ready();
            await createArgocdCluster(env.cp.hub, ns, {
              id: secretName,
              name,
              server: member.url,
              config,
              labels: spec.labels,
            });
            const base = { id: secretName, name, alias: secretName };
            switch (spec.state) {
              case 'not-ready':
                held.push(`${ns}/${secretName}`);
                await kubectl(env.cp.hub, [
                  'patch',
                  'secret',
                  secretName,
                  '-n',
                  ns,
                  '--type=merge',
                  '-p',
                  JSON.stringify({ metadata: { finalizers: [HOLD] } }),
                ]);
                await kubectl(env.cp.hub, ['delete', 'secret', secretName, '-n', ns, '--wait=false']);
                return { ...base, reason: /being deleted/ };
              case 'refused-plugin':
                return { ...base, reason: new RegExp(`exec plugin "${spec.plugin}" is named by hub data`) };
              case 'wrong-shape':
                return { ...base, reason: await breakArgocdCluster(env.cp.hub, ns, secretName, 'wrong-type') };
              default:
                return { ...base, server: member.url, auth: 'token' };
            }
          },
          remove: (c) => removeArgocdCluster(env.cp.hub, ns, c.id),
          // Through applyMany, as the other hub providers do: one heavy apply at a time with its long time limit (a
          // 600-Secret apply beside another provider's, under CI load, can outlast kubectl's usual 60 s).
          async addMany(n) {
            const names = Array.from({ length: n }, (_, i) => `c-${String(i).padStart(4, '0')}`);
            const config = ready();
            await applyMany(
              env,
              names.map((name) => argocdSecretObject(ns, { id: name, name, server: member.url, config })),
            );
            return names;
          },
          cleanup: () => dropNamespace(env, ns).then(() => undefined),
        };
      },
      stop: () => releaseHeld(env, held),
    };
  },
};

// ---------------------------------------------------------------------------------------------------------------------

/**
 * The program of the exec entry, written by the suite: prints the ClusterList of the state file it is given (one per
 * scope, which the entry rewrites between lists), or fails the way the state says, as a real inventory program can: cut
 * off mid-output (exits 0), killed mid-output, exiting non-zero after writing a secret on stderr, or hanging with a
 * child of its own that holds stdout open (fleet's timeout must end them both).
 */
const EXEC_PROGRAM = `#!${process.execPath}
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const state = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const text = JSON.stringify({ apiVersion: 'fleet.dev/v1alpha1', kind: 'ClusterList', clusters: state.clusters });
const half = text.slice(0, Math.floor(text.length / 2));
if (state.fail === 'cut') {
  process.stdout.write(half);
} else if (state.fail === 'killed') {
  process.stdout.write(half);
  process.stderr.write('inventory: lost the session of key ' + state.secret + '\\n');
  process.kill(process.pid, 'SIGKILL');
} else if (state.fail === 'exit') {
  process.stderr.write('inventory: access denied for key ' + state.secret + '\\n');
  process.exitCode = 3;
} else if (state.fail === 'hang') {
  process.stdout.write(half);
  const child = spawn('sleep', ['300'], { stdio: ['ignore', 'inherit', 'inherit'] });
  writeFileSync(state.pidFile, String(child.pid));
} else {
  process.stdout.write(text);
}
`;

/** Whether a process still runs (a zombie not yet reaped by init counts as gone: it holds nothing open). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The exec provider: a program named in fleet.yaml prints the clusters of a state file the entry rewrites. */
const exec: ProviderEntry = {
  type: 'exec',
  sourceKind: 'exec',
  features: ['list', 'names', 'labels', 'not-ready', 'refused-plugin', 'removal', 'wrong-shape', 'hub-gone'],
  notApplicable: {
    'short-names': "a cluster is named by the program's `name`: there is no shorter name",
    paging:
      "the program's stdout is read whole, one answer: there is no page (600 clusters in one answer: `paging (no pages)`)",
  },
  manyWhole: true,
  // What the program prints is data, like a hub Secret: its exec credentials run only where the entry allows them.
  pluginTrust: 'data',
  async start(env): Promise<Kit> {
    const member = env.cp.members[0];
    const caData = readFileSync(member.caFile).toString('base64');
    const base = join(env.dir, 'exec');
    mkdirSync(base, { recursive: true, mode: 0o700 });
    const program = join(base, 'inventory.mjs');
    writeFileSync(program, EXEC_PROGRAM, { mode: 0o755 });
    // The exec credential of the ready clusters that use one: allowed by the entry (credentialPluginAllowlist), and it
    // answers with alice's token if run.
    const plugin = join(base, 'alice-plugin.sh');
    writeFileSync(plugin, `#!/bin/sh\ncat '${join(base, 'alice.json')}'\n`, { mode: 0o755 });
    writeFileSync(
      join(base, 'alice.json'),
      JSON.stringify({
        apiVersion: 'client.authentication.k8s.io/v1',
        kind: 'ExecCredential',
        status: { token: alice(env).token },
      }),
      { mode: 0o600 },
    );
    // A key the wrong-shape entry and the failing program carry: a secret fleet does not know, never to be printed.
    const secret = `AKIA${env.run.replace(/[^a-z0-9]/gi, '').toUpperCase()}SECRETKEY`;
    const ready = (id: string) => ({ name: id, kubeconfig: credentialText(env, `exec-${id}`, { id }) });
    return {
      secrets: [secret],
      async scope(id): Promise<Scope> {
        const dir = join(base, id);
        mkdirSync(dir, { recursive: true });
        const stateFile = join(dir, 'state.json');
        const state: { clusters: Record<string, unknown>[]; fail?: string; secret: string; pidFile: string } = {
          clusters: [],
          secret,
          pidFile: join(dir, 'hang.pid'),
        };
        const save = () => writeFileSync(stateFile, JSON.stringify(state), { mode: 0o600 });
        save();
        const failing = (what: string, fail: string, reason: RegExp, check?: () => void) => ({
          what,
          reason,
          secret,
          start: () => {
            state.fail = fail;
            save();
          },
          stop: () => {
            delete state.fail;
            save();
          },
          check,
        });
        return {
          baseline: [],
          entry: () => ({
            type: 'exec',
            command: program,
            args: [stateFile],
            // The failures' scope: a hanging program is ended within seconds.
            ...(id === 'gone' ? { timeout: '5s' } : {}),
            credentialPluginAllowlist: [{ command: plugin }],
          }),
          async add(spec): Promise<Cluster> {
            const labels = spec.labels ? { labels: spec.labels } : {};
            const base = { id: spec.id, name: spec.id };
            const server = { server: member.url, certificateAuthorityData: caData };
            let cluster: Record<string, unknown>;
            let out: Cluster;
            switch (spec.state) {
              case 'not-ready':
                // A cluster the program knows without an endpoint yet (as EKS's CREATING ones): fleet cannot reach it.
                // fleet probes no server when listing, for any provider: not ready is what the listing can tell.
                cluster = { name: spec.id, exec: { command: plugin } };
                out = {
                  ...base,
                  reason: new RegExp(`^output: clusters\\[${state.clusters.length}\\]\\.server: is required$`),
                };
                break;
              case 'refused-plugin':
                cluster = { name: spec.id, ...server, exec: { command: spec.plugin } };
                out = { ...base, reason: new RegExp(`exec plugin "${spec.plugin}" is named by hub data`) };
                break;
              case 'wrong-shape':
                // env as `NAME=value` strings (a shell's habit) where the schema has {name, value}: named by field and
                // type, never quoted (the key in it is a secret).
                cluster = {
                  name: spec.id,
                  ...server,
                  exec: { command: plugin, env: [`AWS_SECRET_ACCESS_KEY=${secret}`] },
                };
                out = {
                  ...base,
                  reason: new RegExp(
                    `^output: clusters\\[${state.clusters.length}\\]\\.exec\\.env\\[0\\]: must be a mapping, got a string$`,
                  ),
                };
                break;
              default:
                // b through the allowed exec credential, every other through a kubeconfig with a token.
                cluster = spec.id === 'b' ? { name: spec.id, ...server, exec: { command: plugin } } : ready(spec.id);
                out = { ...base, server: member.url, auth: spec.id === 'b' ? 'exec' : 'token' };
            }
            state.clusters.push({ ...cluster, ...labels });
            save();
            return out;
          },
          async remove(c) {
            state.clusters = state.clusters.filter((x) => x.name !== c.id);
            save();
          },
          async addMany(n) {
            const names = Array.from({ length: n }, (_, i) => `x-${String(i).padStart(4, '0')}`);
            state.clusters.push(...names.map(ready));
            save();
            return names;
          },
          failures: () => [
            failing(
              'cut off mid-output (exit 0)',
              'cut',
              /\): output is not valid JSON( \(at byte \d+\))?; expected a ClusterList/,
            ),
            failing('killed mid-output', 'killed', /\): exited with SIGKILL \(its stderr is not shown/),
            failing('exits 3 after writing a key on stderr', 'exit', /\): exited with 3 \(its stderr is not shown/),
            failing(
              'hangs past its timeout (5s) with a child holding stdout',
              'hang',
              /\): no answer within 5s$/,
              () => {
                const pid = Number(readFileSync(state.pidFile, 'utf8'));
                assert.equal(running(pid), false, `the program's child ${pid} outlived the timeout`);
              },
            ),
          ],
        };
      },
    };
  },
};

/**
 * The provider table. One entry per provider type; its features and a fixture-maker. The suite runs every case over
 * every entry: a feature an entry lacks is reported as not applicable with the entry's reason.
 */
export const PROVIDERS: ProviderEntry[] = [
  file,
  kubeconfigSecrets,
  clusterApi,
  clusterInventory,
  namespaces,
  kind,
  kcp,
  argocd,
  exec,
];
