import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { ConfigError } from '../../src/base/errors.js';
import {
  ALLOW_FIELDS,
  PROVIDERS,
  WORKING_DIR_REFUSED,
  defaultConfigPaths,
  loadFleetConfig,
  parseFleetConfig,
} from '../../src/config/fleet-config.js';

const env = { HOME: '/home/op' };
const parse = (text: string) => parseFleetConfig(text, '/etc/fleet/fleet.yaml', env, '/work');

function rejects(text: string, message: string) {
  assert.throws(
    () => parse(text),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.equal(error.message, message);
      assert.equal(error.exitCode, 2);
      return true;
    },
  );
}

describe('fleet configuration: format', () => {
  it('reads every provider type, with paths relative to the file and ~ as the home directory', () => {
    const config = parse(`
apiVersion: fleet/v1alpha1
kind: FleetConfig
hub: {kubeconfig: hub.yaml, context: hub-admin}
providers:
  - {name: local, type: file, kubeconfig: [~/.kube/config, clusters/]}
  - {name: secrets, type: kubeconfig, namespace: fleet-system, label: example.com/cluster, key: value.yaml}
  - {name: capi, type: cluster-api, apiVersion: v1beta1, hub: {context: capi-mgmt}}
  - {name: inventory, type: cluster-inventory-api, providerFile: access/providers.json}
  - {name: legacy, type: cluster-inventory, consumer: argo, namespace: fleet}
  - {name: tenants, type: namespace, selector: tenant, hub: {kubeconfig: /abs/dev.yaml}}
  - {type: kind, prefix: dev-, command: ./bin/kind}
`);
    assert.equal(config.path, '/etc/fleet/fleet.yaml');
    assert.deepEqual(config.hub, { kubeconfig: ['/etc/fleet/hub.yaml'], context: 'hub-admin' });
    const [local, secrets, capi, inventory, legacy, tenants, kind] = config.providers;
    assert.deepEqual(local, {
      type: 'file',
      name: 'local',
      origin: '/etc/fleet/fleet.yaml: providers[0]',
      kubeconfig: ['/home/op/.kube/config', '/etc/fleet/clusters'],
    });
    assert.deepEqual(
      { ...secrets, origin: undefined },
      {
        type: 'kubeconfig',
        name: 'secrets',
        origin: undefined,
        hub: undefined,
        namespace: 'fleet-system',
        label: 'example.com/cluster',
        key: 'value.yaml',
      },
    );
    assert.deepEqual(capi.type === 'cluster-api' && [capi.apiVersion, capi.hub], [
      'v1beta1',
      { kubeconfig: undefined, context: 'capi-mgmt' },
    ]);
    assert.deepEqual(inventory.type === 'cluster-inventory' && [inventory.providerFile, inventory.consumer], [
      '/etc/fleet/access/providers.json',
      undefined,
    ]);
    assert.deepEqual(legacy.type === 'cluster-inventory' && [legacy.consumer, legacy.namespace], ['argo', 'fleet']);
    assert.deepEqual(tenants.type === 'namespace' && [tenants.selector, tenants.hub], [
      'tenant',
      { kubeconfig: ['/abs/dev.yaml'], context: undefined },
    ]);
    // An unnamed entry is named after its type; a command with a path is relative to the file.
    assert.deepEqual(kind.type === 'kind' && [kind.name, kind.prefix, kind.command], [
      'kind',
      'dev-',
      '/etc/fleet/bin/kind',
    ]);
  });

  it('rejects mistakes with one line naming the file and the field', () => {
    const f = '/etc/fleet/fleet.yaml';
    rejects('providers: [\n', `${f}: not valid YAML (line 2): unexpected end of the stream within a flow collection`);
    rejects('- a\n- b\n', `${f}: a fleet configuration must be a mapping`);
    rejects('providers: []\n', `${f}: providers: name at least one provider`);
    rejects('provider:\n  - {type: file}\n', `${f}: provider: unknown field (did you mean "providers"?)`);
    rejects(
      'providers:\n  - {type: kubeconfig, namepsace: x}\n',
      `${f}: providers[0].namepsace: unknown field (did you mean "namespace"?)`,
    );
    rejects(
      'providers:\n  - {type: file, selector: x}\n',
      `${f}: providers[0].selector: unknown field (known: name, type, kubeconfig, labels)`,
    );
    rejects(
      'providers:\n  - {type: capi}\n',
      `${f}: providers[0].type: must be one of file, kubeconfig, cluster-api, cluster-inventory, namespace, kind, kcp, exec, argocd; got "capi"`,
    );
    rejects('providers:\n  - {name: a}\n', `${f}: providers[0].type: is required`);
    rejects(
      'providers:\n  - {type: argocd, inCluster: "yes"}\n',
      `${f}: providers[0].inCluster: must be true or false, got string "yes"`,
    );
    rejects(
      'providers:\n  - {type: argocd, incluster: true}\n',
      `${f}: providers[0].incluster: unknown field (did you mean "inCluster"?)`,
    );
    rejects(
      'providers:\n  - {type: file}\n  - {type: file}\n',
      `${f}: providers[1].name: duplicate provider name "file" (give each entry its own name)`,
    );
    rejects(
      'providers:\n  - {type: file, name: "a#b"}\n',
      `${f}: providers[0].name: "a#b" is not a valid provider name (letters, digits, ".", "_" and "-"; it prefixes cluster names as <provider>#<cluster>)`,
    );
    rejects(
      'providers:\n  - {type: kubeconfig, namespace: 3}\n',
      `${f}: providers[0].namespace: must be a string, got number 3`,
    );
    rejects(
      'providers:\n  - {type: kubeconfig, hub: prod}\n',
      `${f}: providers[0].hub: must be a mapping, got string "prod"`,
    );
    rejects(
      'hub: {context: a, namespace: b}\nproviders: [{type: file}]\n',
      `${f}: hub.namespace: unknown field (known: kubeconfig, context)`,
    );
    rejects(
      'providers:\n  - {type: cluster-api, apiVersion: v1}\n',
      `${f}: providers[0].apiVersion: must be one of v1beta2, v1beta1; got "v1"`,
    );
    rejects(
      'providers:\n  - {type: cluster-inventory}\n',
      `${f}: providers[0]: set providerFile (access providers) or consumer (Secret strategy)`,
    );
    rejects(
      'providers:\n  - {type: cluster-inventory, providerFile: a.json, consumer: b}\n',
      `${f}: providers[0].consumer: set providerFile (access providers) or consumer (Secret strategy), not both`,
    );
    rejects(
      'providers:\n  - {type: file, kubeconfig: [a, 3]}\n',
      `${f}: providers[0].kubeconfig: item 1 must be a non-empty string`,
    );
    rejects(
      'apiVersion: fleet/v2\nproviders: [{type: file}]\n',
      `${f}: apiVersion: must be fleet/v1alpha1; got "fleet/v2"`,
    );
    rejects('providers:\n  - file\n', `${f}: providers[0]: must be a mapping, got string "file"`);
  });
});

describe('fleet configuration: where it is found', () => {
  it('looks in ./fleet.yaml, then $XDG_CONFIG_HOME/fleet/config.yaml, else ~/.config/fleet/config.yaml', () => {
    assert.deepEqual(defaultConfigPaths({ HOME: '/h', XDG_CONFIG_HOME: '/x' }, '/w'), [
      '/w/fleet.yaml',
      '/x/fleet/config.yaml',
    ]);
    assert.deepEqual(defaultConfigPaths({ HOME: '/h' }, '/w'), ['/w/fleet.yaml', '/h/.config/fleet/config.yaml']);
    // The XDG spec says a relative value is invalid and must be ignored.
    assert.deepEqual(defaultConfigPaths({ HOME: '/h', XDG_CONFIG_HOME: 'rel' }, '/w'), [
      '/w/fleet.yaml',
      '/h/.config/fleet/config.yaml',
    ]);
  });

  it('uses the first file that exists, none is fine, and an explicit path must exist', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-config-'));
    const cwd = join(d, 'project');
    const xdg = join(d, 'xdg');
    await mkdir(cwd);
    await mkdir(join(xdg, 'fleet'), { recursive: true });
    const e = { HOME: join(d, 'home'), XDG_CONFIG_HOME: xdg };
    assert.equal(await loadFleetConfig({ env: e, cwd }), undefined);

    await writeFile(join(xdg, 'fleet', 'config.yaml'), 'providers: [{name: from-xdg, type: file}]\n');
    assert.equal((await loadFleetConfig({ env: e, cwd }))?.providers[0].name, 'from-xdg');

    // ./fleet.yaml is also Rancher Fleet's bundle file: without kind: FleetConfig it is ignored (a note says so).
    await writeFile(join(cwd, 'fleet.yaml'), 'defaultNamespace: team-a\nhelm:\n  chart: ./chart\n');
    const notes: string[] = [];
    assert.equal((await loadFleetConfig({ env: e, cwd, note: (m) => notes.push(m) }))?.providers[0].name, 'from-xdg');
    assert.deepEqual(notes, [
      `ignoring ${join(cwd, 'fleet.yaml')}: it does not say "kind: FleetConfig" (a Rancher Fleet bundle file?)`,
    ]);
    await writeFile(join(cwd, 'fleet.yaml'), 'providers: [{name: from-cwd, type: file}]\n');
    assert.equal((await loadFleetConfig({ env: e, cwd }))?.providers[0].name, 'from-xdg');

    await writeFile(join(cwd, 'fleet.yaml'), 'kind: FleetConfig\nproviders: [{name: from-cwd, type: file}]\n');
    const found = await loadFleetConfig({ env: e, cwd });
    assert.equal(found?.providers[0].name, 'from-cwd');
    assert.equal(found?.path, join(cwd, 'fleet.yaml'));

    await writeFile(join(d, 'other.yaml'), 'providers: [{name: explicit, type: file}]\n');
    assert.equal((await loadFleetConfig({ path: join(d, 'other.yaml'), env: e, cwd }))?.providers[0].name, 'explicit');
    await assert.rejects(loadFleetConfig({ path: 'missing.yaml', env: e, cwd }), {
      message: '--fleet-config: missing.yaml: no such file',
    });
  });
});

describe('a ./fleet.yaml fleet finds by itself in the working directory (issue 38, item 5)', () => {
  const cwd = '/w';
  const path = '/w/fleet.yaml';
  const found = (text: string) =>
    parseFleetConfig(`kind: FleetConfig\n${text}`, path, env, cwd, { foundInWorkingDir: true });
  const how = `a fleet.yaml found in the working directory may not name programs or files (it may come from a checkout of someone else's code); if you trust it, name it: --fleet-config ${path} (or FLEET_CONFIG=${path})`;

  it("may not name a program, a file read as the user's own, or an allowance for hub data: one line naming the field and how to allow it", () => {
    const cases: Array<[string, string]> = [
      ['providers: [{type: kind, command: ./tools/kind}]\n', 'providers[0].command'],
      ['providers: [{type: kind, command: kind}]\n', 'providers[0].command'],
      ['providers: [{type: file, kubeconfig: [./ci.kubeconfig]}]\n', 'providers[0].kubeconfig'],
      ['providers: [{type: file, kubeconfig: ~/.kube/config}]\n', 'providers[0].kubeconfig'],
      ['providers: [{type: cluster-inventory, providerFile: access.json}]\n', 'providers[0].providerFile'],
      ['hub: {kubeconfig: hub.yaml}\nproviders: [{type: kubeconfig}]\n', 'hub.kubeconfig'],
      [
        'providers: [{type: cluster-api}, {type: namespace, hub: {kubeconfig: [/abs/hub.yaml], context: x}}]\n',
        'providers[1].hub.kubeconfig',
      ],
      [
        'credentialPluginAllowlist: [{command: /bin/sh}]\nproviders: [{type: kubeconfig}]\n',
        'credentialPluginAllowlist',
      ],
      ['localFileAllowlist: [/etc/]\nproviders: [{type: kubeconfig}]\n', 'localFileAllowlist'],
      [
        'providers: [{type: kubeconfig, credentialPluginAllowlist: [{command: mytok}]}]\n',
        'providers[0].credentialPluginAllowlist',
      ],
      ['providers: [{type: kcp, localFileAllowlist: [/var/run/]}]\n', 'providers[0].localFileAllowlist'],
      // Lends the user's own hub credential to an entry hub data describes (issue 46): the operator's word only.
      ['providers: [{type: argocd, inCluster: true}]\n', 'providers[0].inCluster'],
    ];
    for (const [text, field] of cases) {
      assert.throws(
        () => found(text),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.equal(error.message, `${path}: ${field}: ${how}`, text);
          assert.equal(error.exitCode, 2);
          return true;
        },
        text,
      );
      // The same file, named: read as before.
      assert.doesNotThrow(() => parseFleetConfig(`kind: FleetConfig\n${text}`, path, env, cwd), text);
    }
  });

  it("may choose among the user's own settings: every provider type with its fields that name no program and no file", () => {
    const config = found(`hub: {context: hub-admin}
providers:
  - {name: local, type: file, labels: {env: dev}}
  - {name: secrets, type: kubeconfig, namespace: fleet-system, label: example.com/cluster, key: value.yaml, hub: {context: other}}
  - {name: capi, type: cluster-api, apiVersion: v1beta1}
  - {name: legacy, type: cluster-inventory, consumer: argo, namespace: fleet}
  - {name: tenants, type: namespace, selector: tenant}
  - {name: dev, type: kind, prefix: dev-}
  - {name: kcp, type: kcp, root: root:org, depth: 1, server: workspace, frontProxy: true}
`);
    assert.deepEqual(
      config.providers.map((p) => p.type),
      ['file', 'kubeconfig', 'cluster-api', 'cluster-inventory', 'namespace', 'kind', 'kcp'],
    );
    assert.deepEqual(config.hub, { kubeconfig: undefined, context: 'hub-admin' });
  });

  it('every field of every provider type is decided: refused in the working directory, or listed here as naming nothing to run or read', () => {
    // A new field fails this test until it is put in the provider's `local` (fleet-config.ts) or here, on purpose.
    const namesNothing: Record<string, string[]> = {
      file: ['labels'],
      kubeconfig: ['hub', 'namespace', 'label', 'key'],
      'cluster-api': ['hub', 'namespace', 'apiVersion'],
      'cluster-inventory': ['hub', 'namespace', 'consumer'],
      namespace: ['hub', 'selector'],
      kind: ['prefix'],
      kcp: ['hub', 'root', 'depth', 'server', 'frontProxy'],
      exec: ['timeout'],
      argocd: ['hub', 'namespace'],
    };
    for (const spec of PROVIDERS) {
      assert.deepEqual([...spec.fields].sort(), [...spec.local, ...(namesNothing[spec.type] ?? [])].sort(), spec.type);
      assert.deepEqual(
        spec.local.filter((f) => namesNothing[spec.type]?.includes(f)),
        [],
        spec.type,
      );
    }
    assert.deepEqual([...WORKING_DIR_REFUSED.topLevel], [...ALLOW_FIELDS]);
    assert.deepEqual([...WORKING_DIR_REFUSED.provider], [...ALLOW_FIELDS]);
    assert.deepEqual([...WORKING_DIR_REFUSED.hub], ['kubeconfig']);
  });

  it('one that is not YAML, or not a mapping, is exit 2 naming the file and where it was found; an empty or Rancher Fleet file is still ignored', async () => {
    const d = await mkdtemp(join(tmpdir(), 'fleet-config-wd-'));
    const project = join(d, 'project');
    const xdg = join(d, 'xdg');
    await mkdir(project);
    await mkdir(join(xdg, 'fleet'), { recursive: true });
    await writeFile(join(xdg, 'fleet', 'config.yaml'), 'providers: [{name: from-xdg, type: file}]\n');
    const e = { HOME: join(d, 'home'), XDG_CONFIG_HOME: xdg };
    const local = join(project, 'fleet.yaml');
    const refused: Array<[string, string]> = [
      [
        'kind: FleetConfig\nproviders: [{type: file\n',
        `${local}: not valid YAML (line 3): unexpected end of the stream within a flow collection (found in the working directory: fix or remove it; to use another file, name it with --fleet-config or FLEET_CONFIG)`,
      ],
      [
        'defaultNamespace: a\n  helm: x\n',
        `${local}: not valid YAML (line 2): bad indentation of a mapping entry (found in the working directory: fix or remove it; to use another file, name it with --fleet-config or FLEET_CONFIG)`,
      ],
      [
        'kind: FleetConfig\nkind: Other\n',
        `${local}: not valid YAML (line 2): duplicated mapping key (found in the working directory: fix or remove it; to use another file, name it with --fleet-config or FLEET_CONFIG)`,
      ],
      [
        'defaultNamespace: a\n---\n{[\n',
        `${local}: not valid YAML (line 4): unexpected end of the stream within a flow collection (found in the working directory: fix or remove it; to use another file, name it with --fleet-config or FLEET_CONFIG)`,
      ],
      [
        '- kind: FleetConfig\n',
        `${local}: found in the working directory, and neither a fleet configuration (kind: FleetConfig) nor a Rancher Fleet bundle file: its first document is a list, not a mapping`,
      ],
      [
        'just some words\n',
        `${local}: found in the working directory, and neither a fleet configuration (kind: FleetConfig) nor a Rancher Fleet bundle file: its first document is a string, not a mapping`,
      ],
    ];
    for (const [text, message] of refused) {
      await writeFile(local, text);
      await assert.rejects(
        loadFleetConfig({ env: e, cwd: project }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.equal(error.message, message);
          return true;
        },
        text,
      );
    }
    for (const text of ['', '# nothing yet\n', 'defaultNamespace: team-a\nhelm: {chart: ./chart}\n']) {
      await writeFile(local, text);
      assert.equal(
        (await loadFleetConfig({ env: e, cwd: project }))?.providers[0].name,
        'from-xdg',
        JSON.stringify(text),
      );
    }
    // Named, the broken file is the same one-line error it always was.
    await writeFile(local, 'kind: FleetConfig\nproviders: [{type: file\n');
    await assert.rejects(loadFleetConfig({ path: local, env: e, cwd: project }), {
      message: `${local}: not valid YAML (line 3): unexpected end of the stream within a flow collection`,
    });
  });
});
